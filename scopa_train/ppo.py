"""The PPO update (clipped objective, clipped value loss, entropy bonus), CleanRL style."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from scopa_policy.features import take_rows
from scopa_policy.network import PolicyNet

from .rollout import Batch


@dataclass
class UpdateStats:
    policy_loss: float
    value_loss: float
    entropy: float
    approx_kl: float
    old_approx_kl: float
    clip_fraction: float
    explained_variance: float
    epochs: int
    samples: int  # transitions passed through the learner (all epochs)
    seconds: float
    # the exact teacher's decisions (last deal, 2 players; ``endgame_coef``): their share
    # of the rollout, and the policy's expected regret on them (points per decision) and
    # how its argmax did on them, measured in the first epoch before each minibatch's step
    taught_fraction: float = 0.0
    endgame_loss: float = 0.0
    endgame_best_move_rate: float = float("nan")
    endgame_regret_points: float = float("nan")


def explained_variance(pred: np.ndarray, target: np.ndarray) -> float:
    var = float(np.var(target))
    return float("nan") if var == 0 else 1.0 - float(np.var(target - pred)) / var


def ppo_update(net: PolicyNet, optimizer: torch.optim.Optimizer, batch: Batch,
               rng: np.random.Generator, *, epochs: int, num_minibatches: int,
               clip_coef: float, clip_vloss: bool, ent_coef: float, vf_coef: float,
               max_grad_norm: float, norm_adv: bool, target_kl: float,
               endgame_coef: float = 0.0) -> UpdateStats:
    """PPO epochs over the rollout; with ``endgame_coef`` > 0, plus that weight times the
    policy's expected regret on the minibatch's taught decisions (the exact teacher's
    loss in hand points of each move against the best one, weighted by the move's
    probability: a policy gradient over every legal move with exact action values)."""
    t0 = time.perf_counter()
    net.train()
    device = next(net.parameters()).device
    batch = batch.to(device)
    size = len(batch)
    mb_size = max(1, size // num_minibatches)
    clipfracs: list[float] = []
    pg_loss = v_loss = entropy_loss = approx_kl = old_approx_kl = torch.zeros(())
    eg_losses: list[float] = []
    eg_best: list[float] = []
    eg_regret: list[float] = []
    samples = 0
    epochs_done = 0
    for _ in range(epochs):
        epochs_done += 1
        order = rng.permutation(size)
        for start in range(0, size, mb_size):
            mb = torch.from_numpy(order[start:start + mb_size]).to(device)
            if len(mb) < 2:
                continue
            # the move features were computed once, in the rollout
            cand = batch.candidates(mb)
            logits, newvalue = net.forward_moves(take_rows(batch.obs, mb), cand)
            logp_all = torch.log_softmax(logits, -1)
            newlogp = logp_all.gather(1, batch.actions[mb][:, None]).squeeze(1)
            # padding has probability 0 and a finite log-prob (-1e9): adds 0
            entropy = -(logp_all.exp() * logp_all).sum(-1)
            logratio = newlogp - batch.logprobs[mb]
            ratio = logratio.exp()
            with torch.no_grad():
                old_approx_kl = (-logratio).mean()
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs.append(float(((ratio - 1.0).abs() > clip_coef).float().mean()))
            adv = batch.advantages[mb]
            if norm_adv:
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg_loss = torch.max(-adv * ratio,
                                -adv * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)).mean()
            ret = batch.returns[mb]
            if clip_vloss:
                v_unclipped = (newvalue - ret) ** 2
                v_clipped = batch.values[mb] + torch.clamp(
                    newvalue - batch.values[mb], -clip_coef, clip_coef)
                v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - ret) ** 2).mean()
            else:
                v_loss = 0.5 * ((newvalue - ret) ** 2).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - ent_coef * entropy_loss + vf_coef * v_loss
            taught = batch.taught[mb]
            if taught.any():
                # the policy's expected regret: each move's exact loss in points against
                # the best one, weighted by its probability (padding weighs 0)
                regret = batch.padded(batch.move_regret, mb, cand)[taught]
                eg_loss = (logp_all[taught].exp() * regret).sum(-1).mean()
                if endgame_coef > 0:
                    loss = loss + endgame_coef * eg_loss
                if epochs_done == 1:
                    eg_losses.append(float(eg_loss.detach()))
                    with torch.no_grad():
                        picked = regret.gather(1, logits[taught].argmax(-1, keepdim=True))
                        eg_best.extend((picked == 0).float().squeeze(1).tolist())
                        eg_regret.extend(picked.squeeze(1).tolist())
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), max_grad_norm)
            optimizer.step()
            samples += len(mb)
        if target_kl and float(approx_kl) > target_kl:
            break
    net.eval()
    return UpdateStats(
        policy_loss=float(pg_loss.detach()), value_loss=float(v_loss.detach()),
        entropy=float(entropy_loss.detach()), approx_kl=float(approx_kl),
        old_approx_kl=float(old_approx_kl),
        clip_fraction=float(np.mean(clipfracs)) if clipfracs else 0.0,
        explained_variance=explained_variance(batch.values.cpu().numpy(),
                                              batch.returns.cpu().numpy()),
        epochs=epochs_done, samples=samples, seconds=time.perf_counter() - t0,
        taught_fraction=float(batch.taught.float().mean()) if size else 0.0,
        endgame_loss=float(np.mean(eg_losses)) if eg_losses else 0.0,
        endgame_best_move_rate=float(np.mean(eg_best)) if eg_best else float("nan"),
        endgame_regret_points=float(np.mean(eg_regret)) if eg_regret else float("nan"))
