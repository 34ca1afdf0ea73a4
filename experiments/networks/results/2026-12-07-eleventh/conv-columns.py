# Analysis of the same traces: every layer per example (median of the runs), then leave-one-network-out
# least squares of the conv layers on columns [FLOPs, bytes, positions, positions x channels out].
# Output: conv-columns.txt
import json,glob,re,statistics as st
rows={}
for d in ["/tmp/nwA","/tmp/nwO"]:
  for f in glob.glob(d+"/traces/*-1x1-batch-r*.trace.jsonl"):
    run=json.loads(open(f).readline())["run"]; L=run["layers"]; ex=L["examples"]
    spec=run["net"].split(','); h,w,c=28,28,1
    li=0
    for tok in spec:
        l=L["list"][li]; li+=1
        m=re.match(r'conv(\d+)x(\d+)x(\d+)',tok)
        if m:
            k=int(m.group(1)); o=int(m.group(3)); ho=h
            key=(run["net"][:12],tok,c,o,ho)
            rows.setdefault(key,[]).append((l["time_s"]/ex*1e6, l["flops"], l["bytes"]))
            h=w=ho; c=o
        elif tok.startswith("pool"):
            p=int(tok[4:]); key=(run["net"][:12],tok,c,c,h//p); rows.setdefault(key,[]).append((l["time_s"]/ex*1e6,0,l["bytes"])); h//=p; w//=p
        elif tok.startswith("fc"):
            o=int(tok[2:]); key=(run["net"][:12],tok,h*w*c,o,1); rows.setdefault(key,[]).append((l["time_s"]/ex*1e6,l["flops"],l["bytes"])); h=w=1;c=o
        else:
            key=(run["net"][:12],tok,c,c,h); rows.setdefault(key,[]).append((l["time_s"]/ex*1e6,0,l["bytes"]))
for k,v in sorted(rows.items(), key=lambda kv:(kv[0][1][:2],kv[0][0])):
    t=st.median(x[0] for x in v); fl=v[0][1]; by=v[0][2]
    print("%-13s %-10s cin %5d cout %4d hout %3d  us/ex %7.2f  GF/s %6.1f  B/ex %7d  ns/B %.3f"%(k[0],k[1],k[2],k[3],k[4],t, fl/t/1e3 if fl else 0, by, t*1e3/by if by else 0))
print("---- conv model LONO")
import itertools
conv=[(k,v) for k,v in rows.items() if k[1].startswith("conv")]
def feats(k,v):
    fl=v[0][1]; by=v[0][2]; pos=k[4]*k[4]
    return [fl, by, pos*1.0, pos*k[3]]
def lsq(A,y,cols):
    # least squares on chosen cols, relative
    n=len(cols); M=[[sum(a[i]*a[j] for a in A) for j in cols] for i in cols]; v=[sum(a[i]*yy for a,yy in zip(A,y)) for i in cols]
    for i in range(n):
        piv=max(range(i,n),key=lambda r:abs(M[r][i])); M[i],M[piv]=M[piv],M[i]; v[i],v[piv]=v[piv],v[i]
        for r in range(n):
            if r!=i:
                f=M[r][i]/M[i][i]; M[r]=[a-f*b for a,b in zip(M[r],M[i])]; v[r]-=f*v[i]
    x=[0.0]*len(A[0])
    for i,c in enumerate(cols): x[c]=v[i]/M[i][i]
    return x
nets=sorted(set(k[0] for k,v in conv))
for cols in ([0,1],[0,2],[0,1,2],[0,2,3]):
  print("cols",cols)
  for hold in nets:
    tr=[(k,v) for k,v in conv if k[0]!=hold]
    A=[[f/st.median(x[0] for x in v) for f in feats(k,v)] for k,v in tr]; y=[1.0]*len(A)
    x=lsq(A,y,cols)
    out=[]
    for k,v in conv:
        if k[0]==hold:
            t=st.median(q[0] for q in v); p=sum(a*b for a,b in zip(feats(k,v),x))
            out.append("%s %+.0f%%"%(k[1],100*(p/t-1)))
    print("  %-13s"%hold, "  ".join(out), " coef", ["%.3g"%c for c in x])
