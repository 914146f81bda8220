import cProfile, pstats, sys, time, io
import torch
torch.set_num_threads(1)
from pasur.game.cards import Deck
from pasur.hidden.game import HiddenGame
from pasur.hidden.registry import make_agent

def run(g, targets, spec="cfr", seed=420200, prof=True):
    seat = g % 2
    agents = [None, None]
    agents[seat] = make_agent(spec, seed=seed + g)
    agents[1 - seat] = make_agent("greedy", seed=seed + g)
    game = HiddenGame(Deck.from_seed(seed + g))
    out = []
    while not game.is_terminal:
        p = game.mover
        info = game.observation(p)
        if p != seat:
            game.apply(agents[p].choose(info)); continue
        key = (info.round, info.turn)
        if key in targets and prof:
            pr = cProfile.Profile(); c0 = time.process_time(); pr.enable()
            a = agents[p].choose(info)
            pr.disable(); dt = time.process_time() - c0
            s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(35)
            print(f"==== game {g} round/turn {key} cpu {dt:.2f}s"); print(s.getvalue()[:9000])
            s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(20)
            print(s.getvalue()[:5000])
        else:
            c0 = time.process_time(); a = agents[p].choose(info); out.append((key, time.process_time()-c0))
        game.apply(a)
        if info.round > max(t[0] for t in targets): break
    return out

if __name__ == "__main__":
    g = int(sys.argv[1]); targets = {tuple(map(int, x.split("."))) for x in sys.argv[2:]}
    run(g, targets)
