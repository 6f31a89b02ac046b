"""Words of a training step's figures (analysis.training), in English and Korean.

Input: the figures already formatted as text (numbers with units). Output: the lines of the
"training" section of the text report. ZeRO stage 3 is named FSDP too (the same sharding).
"""
from __future__ import annotations

from costlang.printers.words.korean import fill

__all__ = ["TRAINING", "training_words", "zero_name", "zero_collectives"]

TRAINING = {
    "en": {
        "title": "training step",
        "setup": "  optimizer {optimizer}; recompute {recompute}; {zero}; {chips} chip(s), {data} data-parallel",
        "no_optimizer": "none (gradients only)",
        "zero": {0: "no ZeRO", 1: "ZeRO stage 1 (optimizer states sharded)",
                 2: "ZeRO stage 2 (optimizer states and gradients sharded)",
                 3: "ZeRO stage 3 = FSDP (optimizer states, gradients and parameters sharded)"},
        "tokens": "  tokens per step {tokens}; model FLOPs {model} ({per_token} per token; attention {attention}); "
                  "hardware FLOPs {hardware}; optimizer {optimizer_flops}",
        "time": "  step time ≥ {lower} (overlapped), ≤ {upper} (serial); ≤ {tps} tokens/s",
        "mfu": "  MFU ≤ {mfu}, HFU ≤ {hfu} (at the overlapped bound; peak {dtype} {peak} per chip)",
        "memory": "  per chip: weights {weights} + gradients {gradients} + optimizer states {states} = {total}",
        "measured": "  measured step time {measured}: MFU {achieved_mfu}, HFU {achieved_hfu} (achieved)",
        "collectives": {0: "the gradient buffer all-reduced once per step, before the update",
                        1: "the gradients reduce-scattered before the update, the updated parameters all-gathered",
                        2: "the gradients reduce-scattered before the update, the updated parameters all-gathered",
                        3: "the parameters all-gathered before the forward and before the backward, the "
                           "gradients reduce-scattered before the update"},
    },
    "ko": {
        "title": "학습 스텝",
        "setup": "  옵티마이저 {optimizer}; 재계산 {recompute}; {zero}; 칩 {chips}개, 데이터 병렬 {data}개",
        "no_optimizer": "없음 (그래디언트만)",
        "zero": {0: "ZeRO 없음", 1: "ZeRO 1단계 (옵티마이저 상태 분할)",
                 2: "ZeRO 2단계 (옵티마이저 상태와 그래디언트 분할)",
                 3: "ZeRO 3단계 = FSDP (옵티마이저 상태, 그래디언트, 파라미터 분할)"},
        "tokens": "  스텝당 토큰 {tokens}; 모델 FLOPs {model} (토큰당 {per_token}; 어텐션 {attention}); "
                  "하드웨어 FLOPs {hardware}; 옵티마이저 {optimizer_flops}",
        "time": "  스텝 시간 ≥ {lower} (완전 중첩), ≤ {upper} (직렬); 초당 토큰 ≤ {tps}",
        "mfu": "  MFU ≤ {mfu}, HFU ≤ {hfu} (중첩 하한 기준; 칩당 {dtype} 피크 {peak})",
        "memory": "  칩당: 가중치 {weights} + 그래디언트 {gradients} + 옵티마이저 상태 {states} = {total}",
        "measured": "  측정한 스텝 시간 {measured}: MFU {achieved_mfu}, HFU {achieved_hfu} (달성)",
        "collectives": {0: "그래디언트 버퍼를 스텝마다 한 번, 갱신 전에 all-reduce",
                        1: "갱신 전에 그래디언트를 reduce-scatter, 갱신된 파라미터를 all-gather",
                        2: "갱신 전에 그래디언트를 reduce-scatter, 갱신된 파라미터를 all-gather",
                        3: "순전파 전과 역전파 전에 파라미터를 all-gather, 갱신 전에 그래디언트를 reduce-scatter"},
    },
}


def zero_name(stage: int, lang: str = "en") -> str:
    return TRAINING[lang]["zero"][stage]


def zero_collectives(stage: int, lang: str = "en") -> str:
    return TRAINING[lang]["collectives"][stage]


def training_words(f: dict, lang: str = "en") -> list[str]:
    """The section's lines from the formatted figures `f` (see printers.text.report)."""
    w = TRAINING[lang]
    keys = ("setup", "tokens", "time", "mfu", "memory") + (("measured",) if "measured" in f else ())
    return ["", w["title"]] + [fill(w[k], **f) for k in keys]
