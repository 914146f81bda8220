import time, torch, numpy as np, sys
torch.set_num_threads(1)
import pasur.hidden.rangesolve as rs
import pasur.hidden.cfr_agent as ca
def timed(mod, name, label):
    f = getattr(mod, name)
    def w(*a, **k):
        c0 = time.process_time(); r = f(*a, **k); print(f"    {label} {time.process_time()-c0:.3f}s"); return r
    setattr(mod, name, w)
timed(ca, "expand", "expand")
timed(ca, "history_tree", "history_tree")
timed(ca, "belief_state", "belief_state")
orig = rs.RangeSolve.__init__
def wrapped(self, rt, iterations, method="dcfr", device="cpu"):
    c0 = time.process_time(); orig(self, rt, iterations, method, device)
    print(f"    solve level {rt.level} gadget {rt.gadget} nodes {rt.tree.n_histories} rows {self.cfr.n_rows} A {self.cfr.A} cpu {time.process_time()-c0:.3f}s")
ca.RangeSolve.__init__ = wrapped
orig_ri = rs.RangeSolve.resolve_inputs
def ri(self, *a, **k):
    c0 = time.process_time(); r = orig_ri(self, *a, **k); print(f"    resolve_inputs {time.process_time()-c0:.3f}s"); return r
rs.RangeSolve.resolve_inputs = ri
sys.argv = ["x"] + sys.argv[1:]
exec(open(__file__.replace("phases.py", "cmp.py")).read())
