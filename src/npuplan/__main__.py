import sys

from npuplan.cli import run

sys.exit(run())
