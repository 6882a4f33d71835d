"""Compare lowered NPU ops (type, name, OFM shape, order) with Vela legacy per-op listings.

Reads /work/vela-ref/<scenario>/<model>/stdout.txt (from --show-cpu-operations) if present.
"""
import re,sys
from npuplan.io.tflite import read_tflite
from npuplan.lowering import lower
from npuplan.hw.accelerator import accelerator
sc={"u55_128_highend_shared_perf":"ethos-u55-128","u55_64_deep_shared_size":"ethos-u55-64"}
import os
if not os.path.isdir("/work/vela-ref"):
    raise SystemExit("no /work/vela-ref")
for s,acc in sc.items():
  for m in ["autoencoder_ad","ds_cnn_kws","mobilenet_v1_025_96","mobilenet_v2_035_128","mobilenet_v3_small_224","resnet50_224","resnet8_cifar"]:
    txt=open(f"/work/vela-ref/{s}/{m}/stdout.txt").read()
    vela=[(a,b) for a,b in re.findall(r"^   NPU: (\w+) = (.*) \(inputs.*$",txt,re.M)]
    vela_out=re.findall(r"^   NPU: \w+ = .* outputs \[(.*)\]\)$",txt,re.M)
    lg=lower(read_tflite(f"/work/shared/models/{m}.tflite"),accelerator(acc))
    ours=[(o.op_type,o.name) for o in lg.npu_ops]
    bad=0
    for i,(v,o) in enumerate(zip(vela,ours)):
        if v!=o:
            bad+=1
            if bad<=4: print(s,m,i,"VELA",v,"OURS",o)
    shp=0
    for i,(vo,o) in enumerate(zip(vela_out,lg.npu_ops)):
        vs=[int(x) for x in re.findall(r"\d+",vo)]
        vs=[1]*(4-len(vs))+vs
        if vs!=o.ofm_shape.as_list() and [x for x in vs if x!=1]!=[x for x in o.ofm_shape.as_list() if x!=1]:
            shp+=1
            if shp<=3: print("  shape",m,i,o.name,vs,o.ofm_shape)
    print(s,m,"name/type mismatches",bad,"shape mism",shp, len(vela),len(ours))
