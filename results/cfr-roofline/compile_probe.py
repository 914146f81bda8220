"""torch.compile on the CPU against the eager kernels, for one compact layer's values pass (60,000 edges):
the compile time, whether the result is the same bit for bit, and the best of 200 calls of each.

    nice -n 10 python results/cfr-roofline/compile_probe.py
"""
import time, torch
torch.set_num_threads(1)
E=60000; P=20000; C=30000
child=torch.randint(0,C,(E,)); parent=torch.sort(torch.randint(0,P,(E,))).values
reward=torch.randn(E); sigma=torch.rand(E); v=torch.randn(C)
q=torch.empty(E); tmp=torch.empty(E); vpar=torch.empty(P); c32=child.int(); p32=parent.int()
def eager():
    torch.index_select(v,0,c32,out=q); q.add_(reward); torch.mul(sigma,q,out=tmp); vpar.zero_().scatter_add_(0,parent,tmp)
    return vpar
def fn(v, reward, sigma, child, parent):
    q = reward + v[child]
    return torch.zeros(P).index_add_(0, parent, sigma*q), q
def tm(f, n=200):
    f(); best=1e9
    for _ in range(n):
        t0=time.perf_counter(); f(); best=min(best, time.perf_counter()-t0)
    return best*1e6
t0=time.time(); cf=torch.compile(fn); r=cf(v,reward,sigma,child,parent); print("compile s", time.time()-t0)
print("equal", torch.equal(r[0], eager()), (r[0]-eager()).abs().max().item())
print("eager us", tm(eager), "compiled us", tm(lambda: cf(v,reward,sigma,child,parent)))
