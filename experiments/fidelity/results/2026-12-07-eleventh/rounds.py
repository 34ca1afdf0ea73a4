# The rounds of the shared-step runs: (training time - start-up) / steps, against 2 x the idle
# step c0 + c1 x local batch of each run's own calibration (ranks packed two to a core). Output: rounds.txt
import json,sys,glob,subprocess,statistics as st,os
S="/work/main/build/cli/speedup"
def cal(d):
    c=json.load(open(d+"/calibration.json")); p=c["params"] if "params" in c else c
    return c
for d in sys.argv[1:]:
    c=json.load(open(d+"/calibration.json"))
    def g(k):
        for sec in (c, c.get("params",{})):
            if k in sec: 
                v=sec[k]; return v["value"] if isinstance(v,dict) else v
        return None
    c0=g("c0"); c1=g("c1"); lam=g("oversub_exchange")
    print(d, "c0 %.3f ms c1 %.3f ms Λ %s"%(c0*1e3,c1*1e3,lam))
    for pat,K,B in (("traces/train-3x1-batch-allreduce-b48-r*",3,48),("traces/train-4x1-batch-allreduce-b64-r*",4,64),("measured/train-3x1-batch-allreduce-b32-r*",3,32),("measured/train-4x1-batch-allreduce-b32-r*",4,32),("traces/train-2x1-batch-allreduce-b32-r*",2,32),("measured/train-2x1-batch-allreduce-b8-r*",2,8)):
        ex=[]
        for f in sorted(glob.glob(d+"/"+pat)):
            out=subprocess.run([S,"trace","--measurements","--baseline",f,f],capture_output=True,text=True).stdout.strip().split("\n")[-1].split(",")
            t=float(out[4]); su=float(out[11]); steps=2368//B
            rnd=(t-su)/steps*1e3
            local=B/K; step=(c0+c1*local)*1e3
            pack=2 if K>2 else 1
            ex.append((rnd, rnd-pack*step))
        print("  %-40s step %.2f ms  round %s  extra %s"%(pat.split('/')[-1], (c0+c1*B/K)*1e3, " ".join("%.1f"%r for r,_ in ex), " ".join("%.1f"%e for _,e in ex)))
