# Analysis of the 1x1 traces of /tmp/nwA and /tmp/nwO (printed-1, printed-outside-1): per-kind NNLS
# fits of the layer times (relative errors; NNLS by enumerating column subsets), the default-only
# fit against one over every other network (each network left out in turn). Output: leave-one-network-out.txt
import json,sys,glob,itertools,re,statistics as st
def load(d):
    out={}
    for f in glob.glob(d+"/traces/*-1x1-batch-r*.trace.jsonl"):
        name=f.split('/')[-1].split('-')[0]
        run=json.loads(open(f).readline())["run"]; L=run["layers"]
        spec=run["net"].split(',')
        rows=[]
        for i,l in enumerate(L["list"]):
            if l["flops"]==0 and l["bytes"]==0 and l["step_bytes"]==0: continue
            kind=l["kind"]
            rows.append(dict(kind=kind,f=l["flops"]*L["examples"],b=l["bytes"]*L["examples"],s=l["step_bytes"]*L["steps"],n=L["steps"],t=l["time_s"]))
        out.setdefault(name,[]).append(rows)
    return out
data={}
for d in sys.argv[1:]:
    for k,v in load(d).items():
        data.setdefault(k,[]).extend(v)
def solve(A,y):
    p=len(A[0]); best=None
    for mask in range(1,1<<p):
        cols=[j for j in range(p) if mask>>j&1]
        # normal equations
        M=[[sum(r[a]*r[b] for r in A) for b in cols] for a in cols]
        v=[sum(r[a]*yy for r,yy in zip(A,y)) for a in cols]
        n=len(cols)
        try:
            for i in range(n):
                piv=max(range(i,n),key=lambda r:abs(M[r][i]))
                M[i],M[piv]=M[piv],M[i]; v[i],v[piv]=v[piv],v[i]
                if abs(M[i][i])<1e-300: raise ZeroDivisionError
                for r in range(n):
                    if r!=i:
                        fct=M[r][i]/M[i][i]
                        M[r]=[a-fct*b for a,b in zip(M[r],M[i])]; v[r]-=fct*v[i]
            x=[v[i]/M[i][i] for i in range(n)]
        except ZeroDivisionError: continue
        if min(x)<0: continue
        full=[0.0]*p
        for j,c in enumerate(cols): full[c]=x[j]
        res=sum((sum(a*b for a,b in zip(r,full))-yy)**2 for r,yy in zip(A,y))
        if best is None or res<best[0]: best=(res,full)
    return best[1] if best else [0.0]*p
feat=lambda r:[r["f"],r["b"],r["s"],r["n"]]
def fit(nets):
    rates={}
    kinds=set(r["kind"] for n in nets for run in data[n] for r in run)
    for k in kinds:
        rows=[r for n in nets for run in data[n] for r in run if r["kind"]==k]
        A=[[x/r["t"] for x in feat(r)] for r in rows]; y=[1.0]*len(rows)
        rates[k]=solve(A,y)
    return rates
def predict(rates,net):
    errs=[]
    for run in data[net]:
        tm=sum(r["t"] for r in run); tp=sum(sum(a*b for a,b in zip(feat(r),rates.get(r["kind"],[0]*4))) for r in run)
        errs.append(tp/tm-1)
    return st.median(errs)
nets=sorted(data)
print("networks:",nets)
base=fit(["default"])
for n in nets:
    others=[m for m in nets if m!=n]
    print("%-8s default-only %+6.1f%%   all-others %+6.1f%%"%(n,100*predict(base,n),100*predict(fit(others),n)))
