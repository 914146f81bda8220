import time, torch, numpy as np
torch.set_num_threads(1)
from pasur.game.cards import Deck
from pasur.hidden.game import HiddenGame
from pasur.hidden.registry import make_agent
import pasur.hidden.rangesolve as rs
orig = rs.RangeSolve.__init__
def wrapped(self, rt, iterations, method="dcfr", device="cpu"):
    c0 = time.process_time()
    orig(self, rt, iterations, method, device)
    cfr = self.cfr
    lens = np.concatenate([rs.InfosetActions.lengths(a) for a in rt.tree.actions])
    print(f"  solve level {rt.level} gadget {rt.gadget} nodes {rt.tree.n_histories} rows {cfr.n_rows} A {cfr.A} mean legal {lens.mean():.2f} cpu {time.process_time()-c0:.2f}s")
rs.RangeSolve.__init__ = wrapped
agent = make_agent("cfr", seed=420200)
game = HiddenGame(Deck.from_seed(420200))
opp = make_agent("greedy", seed=420200)
while not game.is_terminal and game.state.round < 2:
    info = game.observation(game.mover)
    if game.mover == 0:
        c0 = time.process_time(); a = agent.choose(info); print(info.round, info.turn, f"{time.process_time()-c0:.2f}")
    else:
        a = opp.choose(info)
    game.apply(a)
