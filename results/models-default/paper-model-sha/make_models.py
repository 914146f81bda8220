import sys, hashlib, json
from pathlib import Path
sys.path.insert(0, "/work/main/tests")
from helpers import position
from pasur.solve.tree import build_tree
from pasur.solve.rounds import solve_cfr
from pasur.solve.cfr import CFRParams
from pasur.solve.strategy_io import write_strategy_table
from pasur.learn.models import ModelParams, fit_model, save_model
out = Path(sys.argv[1]); out.mkdir(exist_ok=True)
start = position(3, 3, 0)
tree = build_tree(start, "paper", infosets=True)
res = solve_cfr(tree, CFRParams(method="dcfr", iterations=30))
write_strategy_table(out / "t.parquet", tree, res.strategy, "d3")
for name, p in {"v0": dict(validation_fraction=0), "v1norefit": dict(refit=False) if "refit" in ModelParams.__dataclass_fields__ else {}}.items():
    m = fit_model([out / "t.parquet"], ModelParams(rounds=30, **p))
    save_model(m, out / f"{name}.ubj")
    print(name, hashlib.sha256((out / f"{name}.ubj").read_bytes()).hexdigest()[:16], json.dumps(m.card["validation"].get("rmse")))
