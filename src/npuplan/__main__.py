import sys

from npuplan.cli import main

sys.exit(main())
