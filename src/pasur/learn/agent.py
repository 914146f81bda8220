"""A model played in self-play: the paper's scheme of scoring the infoset each legal action leads to."""

from __future__ import annotations

import torch

from pasur.learn.files import StrategyModel


class BatchModel:
    """Plays a model: scores the infoset every legal action leads to, clips at 0, normalizes per
    game and samples (the paper's scheme; uniform where every score is 0)."""

    name = "model"

    def __init__(self, model: StrategyModel, seed: int | None = None) -> None:
        from pasur.play.selfplay import BatchRandom

        self.model = model
        self.feature_mode = model.tree_mode
        self.sampler = BatchRandom(seed)

    def probabilities(self, state, actions) -> torch.Tensor:
        """Per action, the model's probability of it in its game."""
        features = state.infosets[self.feature_mode].children(state, actions)
        score = torch.from_numpy(self.model.predict(features)).to(features.device, torch.float64).clamp_min(0)
        total = torch.zeros(actions.brf.shape[0], dtype=torch.float64, device=score.device)
        total.index_add_(0, actions.row, score)
        uniform = 1.0 / actions.brf.double()
        zero = total[actions.row] <= 0
        return torch.where(zero, uniform[actions.row], score / total[actions.row].clamp_min(1e-300))

    def choose(self, state, actions) -> torch.Tensor:
        from pasur.play.selfplay import sample_per_game

        if self.feature_mode not in state.infosets:
            raise ValueError("a model agent needs the batch's infoset codes (use play_batch)")
        return sample_per_game(self.probabilities(state, actions), actions, self.sampler, state.n)
