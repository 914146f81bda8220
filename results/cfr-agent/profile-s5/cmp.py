import sys, time, torch, numpy as np
torch.set_num_threads(1)
from pasur.game.cards import Deck
from pasur.hidden.game import HiddenGame
from pasur.hidden.registry import make_agent
g = int(sys.argv[1]); rounds = int(sys.argv[2]); spec = sys.argv[3] if len(sys.argv) > 3 else "cfr"
seed = 420200; seat = g % 2
agent = make_agent(spec, seed=seed + g); opp = make_agent("greedy", seed=seed + g)
game = HiddenGame(Deck.from_seed(seed + g))
tot = 0
while not game.is_terminal and game.state.round < rounds:
    info = game.observation(game.mover)
    if game.mover == seat:
        c0 = time.process_time(); legal, probs = agent.strategy(info); a = agent.choose(info); dt = time.process_time() - c0; tot += dt
        print(info.round, info.turn, f"{dt:.2f}s", [f"{p:.9f}" for p in probs])
    else:
        a = opp.choose(info)
    game.apply(a)
print("total cpu", f"{tot:.2f}")
