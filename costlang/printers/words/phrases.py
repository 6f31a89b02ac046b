"""The words of the derivation printers, per language: one table of phrases, one logic.

Input: a language code (`en`, `ko`) and a phrase key. Output: the phrase, a `str.format` template
whose fields the printer fills with formatted math or names. Korean follows the chapter's terms
(산술 강도 I, 임계 강도 I*, 메모리 바운드, 연산 바운드, 데이터 이동량, 연산량, 달성 가능 성능).
"""
from __future__ import annotations

__all__ = ["PHRASES", "LANGUAGES", "phrase"]

_EN = {
    "explore_title": "Explored {structures} structures, {configurations} configurations ({where}).",
    "explore_serial": "serially", "explore_workers": "on {workers} Dask workers",
    "explore_choice": "choice", "explore_axis": "over", "explore_require": "require",
    "explore_best": "Best {objective} ({sense}):", "explore_max": "maximised", "explore_min": "minimised",
    "explore_none": "no configuration satisfies every constraint",
    "explore_front_title": "Pareto front of {first} and {second}: {count} configurations",
    "explore_configuration": "configuration", "explore_more": "... and {count} more (see --csv or --json)",
    "explore_rejected": "Rejected (configurations, why):",
    "explore_constraint": "{constraint} does not hold",
    "explore_weights": "the weights alone need {weights} per chip, more than the {capacity} of {hardware} (not analysed)",
    "explore_file": "the file refuses these settings: {where}: {message}",
    "explore_error": "not evaluated: {message}",
    "explore_as_written": "the file as written",
    "explore_feasible": "feasible configurations", "explore_front": "Pareto front",
    "explore_written": "The best configuration for {objective} ({sense}) found by costlang explore: {value}",
    "title": "Derivation: {file}",
    "hardware": "Hardware {name}: peak {peaks}; bandwidth {bw} ({level}); launch overhead {launch}.",
    "conventions": ("Conventions: one FMA = 2 FLOP; SI decimal units; bytes are algorithmic bytes at the "
                    "{level} level (each kernel reads each input once and writes each output once, at its "
                    "dtype's size); {Tk} is a lower bound on the measured time."),
    "free": "Free symbols: {symbols}. The results below are expressions in them.",
    "kernel": "Kernel {name} ({ops})",
    "kernel_repeated": "Kernel {name} ({ops}), run {count} times (a repeated body; the totals count it {count} times)",
    "step_bytes": "{n} Data moved ({level}): (reads + writes) times the dtype size",
    "read": "read", "write": "write",
    "traffic": "{direction} {tensor} ({role}, {dtype}): {bytes}",
    "traffic_stated": "{direction} (stated in the file): {bytes}",
    "step_flops": "{n} FLOPs (one FMA = 2 FLOP)",
    "step_intensity": "{n} Arithmetic intensity {I} against the critical intensity {Istar}",
    "critical_dtype": "{Istar} uses the {dtype} peak, the dtype this kernel computes in.",
    "step_attainable": "Attainable performance {formula}",
    "step_times": "Times",
    "step_comms_title": "Communication (α–β model)",
    "step_comms": ("{collective} over mesh axis {axis}, per chip: p chips in the group, n bytes of the input "
                   "on each; the link is {link}, {bw} per direction, latency {alpha}; {rule}."),
    "memory_title": "Memory hierarchy",
    "memory_levels": "Bytes and {Tm} at each level, farthest first; the largest binds: {level}.",
    "tiling_matmul": ("Tiling {tile}: each A tile is re-read once per column of C tiles and each B tile once per "
                      "row, so the HBM bytes follow from the tile counts."),
    "tiling_limit": ("As K grows, I tends to 2·bm·bn/(bm + bn) FLOP per element read, the chapter's "
                     "\u201cI ≈ T\u201d for square tiles; per byte it is that over b, i.e. T/2 FLOP/B for a 2-byte dtype."),
    "tiling_held": "{tensor} fits in {level}: HBM sees it once, {level} on every re-read.",
    "fits": "The working set fits in {stage} ({capacity} per SM).",
    "does_not_fit": "The working set does not fit in {stage} ({capacity} per SM).",
    "fit_unknown": "Compare the working set with {stage} ({capacity} per SM).",
    "flash": ("FlashAttention (Dao et al. 2022, Algorithm 1), on-chip size {M} elements ({C} bytes): B_c is the "
              "largest block up to ⌈M/(4·d)⌉ whose working set b·(2·B_c·d + 2·B_r·d + B_r·B_c) + 8·B_r fits in {C} "
              "(K and V blocks, Q and O blocks, the scores block, fp32 row max and sum). K and V are read once, "
              "Q {Tc} times, O written {Tc} times and read {Tc} − 1 times, the row statistics written and read "
              "{Tc} − 1 times; the scores never reach HBM."),
    "flash_theta": "For large N the traffic is Θ(N²·d²/M): the leading term without ceilings is",
    "strided": ("Access granularity: memory moves whole {sector} sectors, so a read of n elements S apart moves "
                "n·min(S·b, sector) bytes, at least the algorithmic n·b; the effective bandwidth counts only "
                "the algorithmic bytes."),
    "efficiency": "Efficiency factors (fractions of the peaks, applied once; peak() and bandwidth() stay raw): {items}.",
    "verdict_title": "Verdict",
    "memory-bound": ("Since {comparison}, the kernel is memory-bound. Faster cores do not help; "
                     "raise I by fusion, reuse (tiling) or a smaller dtype."),
    "compute-bound": ("Since {comparison}, the kernel is compute-bound; the ceiling is the peak, so "
                      "tensor cores and occupancy are the levers."),
    "balanced": "Since {comparison}, the kernel sits on the ridge point: compute and memory take the same time.",
    "balanced_comms": ("Since {comparison}, the link and the busiest other resource take the same time: the "
                       "kernel is balanced between communication and the rest, not on the roofline's ridge."),
    "launch-bound": ("The launch overhead exceeds both times ({comparison}): the kernel is launch-bound; "
                     "fuse kernels or batch the launches (CUDA Graphs)."),
    "depends": "The kernel is {verdict}.",
    "comms-bound": ("Since {comparison}, the kernel is comms-bound: the link is the bottleneck; shard "
                    "differently, overlap communication with compute, or use a faster link."),
    "depends_free": "it depends on the free symbols (see each kernel).",
    "fusion": "Fusion: {before} → {after}",
    "fusion_kernels": "Kernels before: {before}. After: {after}.",
    "fusion_ends": "after / before {at_one} at {x} = 1, {at_inf} as {x} → ∞",
    "pools_elsewhere": ("Pools of other hardware: {pools}. Every kernel below is derived on {name}, the "
                        "program's hardware; costlang run gives each pool's instances on their own "
                        "(derive --hardware NAME derives them there)."),
    "solve": "Solve {name}",
    "equation": "Solve {lhs} {rel} {rhs} for {x}:",
    "set_aside": "The file's value {value} is set aside: the solve leaves {x} free.",
    "tied": "The shapes need {eq}, so it holds while {x} varies.",
    "where": "where {items}.",
    "lifted": {"b": "bytes per element", "Istar": "critical intensity", "BW": "bandwidth"},
    "condition": "Valid when {condition} (for {expr}).",
    "scanned": "sympy cannot solve this equation exactly, so {x} was found numerically: the sign changes of "
               "lhs − rhs at {points} points from {low} to {high}, each narrowed by bisection on the exact "
               "expression (two crossings between neighbouring points would be missed).",
    "scan_none": "Undecided: sympy cannot solve this equation exactly, and lhs − rhs does not change sign at any "
                 "of {points} points from {low} to {high}; a scan is not a proof, so no regime is stated.",
    "validity": "The closed form {root} holds only while {conditions}: there the max()/min() branch it was "
                "solved on is the one taken; elsewhere another branch gives {x}.",
    "regimes": "On each side of the crossing:",
    "every": "every {x}",
    "regime_words": {"memory-bound": "memory-bound", "compute-bound": "compute-bound",
                     "fits": "fits in memory", "does-not-fit": "does not fit in memory", "equal": "equal"},
    "regime_is": {"memory-bound": "is memory-bound", "compute-bound": "is compute-bound",
                  "fits": "fits in memory", "does-not-fit": "does not fit in memory", "equal": "is equal"},
    "case": "{parts} there", "case_if": "if {parts} there",
    "case_bound": "{kernel} is {bound}", "case_larger": "{term} is the larger", "case_smaller": "{term} is the smaller",
    "satisfies": "satisfies {condition}",
    "whole": "Whole values of {x}:",
    "whole_largest": "largest whole {x} that {predicate}: {value}",
    "whole_smallest": "smallest whole {x} that {predicate}: {value}",
    "whole_accepted": "{value}, the first from {form} that the file accepts (it rejects {rejected}: {reason})",
    "whole_none": "none from {form} that the file accepts within {count} values (it rejects {rejected}: {reason})",
    "holds": "The relation holds for {where}.",
    "holds_nowhere": "No {x} satisfies the relation.",
    "or": " or ",
    "no_crossing": "No crossing: {extremum} {side} {value} {op} {other} {other_value}.",
    "so_every": "So for every {x}: {words}.",
    "crossing_needs": "a crossing {root} needs {condition}",
    "limit": "As {x}: {side} {value}.",
    "approximation": "Approximation for large {symbol}: {expr}{exact}.",
    "exact": " (the root itself: {value})",
    "regime_map": "Where each kernel turns from one bound to the other, as {x} varies:",
    "map_fixed": "{kernel}: {verdict} for every {x}",
    "totals": "Whole program ({launches} kernel launches)",
    "bounds": ("Many chips, per chip: the lower bound assumes communication fully overlapped with compute "
               "and memory, the upper bound that nothing overlaps (sums over the kernels; with pipeline "
               "stages × (m + p − 1)/m, the bubble)."),
    "measured": "Measured: kernel {name}, time {time}",
    "queries": "Queries",
    "per": {"chip": "per chip", "system": "per system"},
    # the text report's summary view (printers/text/report.py)
    "summary_top": "where the time goes: the {shown} of {n} kernels that take the most (T_kernel × count)",
    "summary_grows": ("where the time goes: the {shown} of {n} kernels whose time grows fastest with {symbols} "
                      "(ranked with each at 10^6)"),
    "summary_rest": "the other {others} kernels: {time} ({share})",
    "summary_others": "and {others} other kernels",
    "summary_more": "every kernel, its traffic and attainable performance: --kernels; every figure: --json",
    "cut_cells": ("… marks an expression cut at {width} characters: `costlang run --json` prints it whole, "
                  "`costlang derive` derives it"),
    "lets": "Definitions",
    "query_verdict": "{name}: {verdict}",
    "level_bound": "{level}-bound",
    "undecided_solve": "sympy could not decide: {items}.",
    "undecided_parts": {"regimes": "the regimes on each side of the crossing", "general form": "the general form",
                        "limits": "the limits", "approximations": "the approximations",
                        "conditions": "when the root is positive", "explanation": "why there is no crossing"},
    "when": "{bound} when {condition}",
    "at": "{bound} at {condition}",
    "else": "else {bound}",
    "aside": " ({notes})",
    "regime_join": ", ",
    "and": " and ",
    "undecided": "undecided (sympy could not decide)",
    "verdict_words": {"memory-bound": "memory-bound", "compute-bound": "compute-bound",
                      "launch-bound": "launch-bound", "balanced": "balanced",
                      "comms-bound": "comms-bound", "depends": "depends on the free symbols",
                      "undecided": "undecided (sympy could not decide)"},
    "role": {"input": "input", "weight": "weight", "cache": "cache", "gradient": "gradient", "state": "state",
             "intermediate": "intermediate", "output": "output", "stated": "stated"},
    "plot": {"title": "Roofline: {file} on {hardware}", "x": "arithmetic intensity I (FLOP/B)",
             "y": "attainable performance", "kernel": "kernel {name}", "unfused": "unfused {name}",
             "kernels": "{n} kernels (the {top} that take longest named)", "more": "{names} and {n} more",
             "peak": "{dtype} peak {value}",
             "not_drawn": "not drawn (they depend on free symbols; use --set or --over): {names}",
             "path": "{kernel} for {symbol} = {lo} … {hi}",
             "crossing": "{kernel}: {below} below {symbol} = {x}, {balanced} at it, {above} above",
             "crossing_at": "crossing at {symbol} = {x}", "against": "{label} against {symbol}"},
    "figure_label": {"flops": "FLOPs", "bytes": "traffic", "intensity": "I", "t_kernel": "T_kernel",
                     "launches": "launches"},
}

_KO = {
    "explore_title": "구조 {structures}개, 구성 {configurations}개를 탐색했다 ({where}).",
    "explore_serial": "순차 실행", "explore_workers": "Dask 워커 {workers}개",
    "explore_choice": "선택", "explore_axis": "범위", "explore_require": "제약",
    "explore_best": "최선의 {objective} ({sense}):", "explore_max": "최대화", "explore_min": "최소화",
    "explore_none": "모든 제약을 만족하는 구성이 없다",
    "explore_front_title": "{first}와 {second}의 파레토 전선: 구성 {count}개",
    "explore_configuration": "구성", "explore_more": "... 외 {count}개 (--csv나 --json 참조)",
    "explore_rejected": "제외된 구성 (개수, 이유):",
    "explore_constraint": "{constraint}를 만족하지 않음",
    "explore_weights": "가중치만으로 칩당 {weights}가 필요해 {hardware}의 {capacity}를 넘음 (분석하지 않음)",
    "explore_file": "파일이 이 설정을 거부함: {where}: {message}",
    "explore_error": "평가하지 못함: {message}",
    "explore_as_written": "파일 그대로",
    "explore_feasible": "가능한 구성", "explore_front": "파레토 전선",
    "explore_written": "costlang explore가 찾은 {objective}의 최선 구성 ({sense}): {value}",
    "title": "유도 과정: {file}",
    "hardware": "하드웨어 {name}: 피크 {peaks}; 대역폭 {bw} ({level}); 런치 오버헤드 {launch}.",
    "conventions": ("가정: FMA 1회 = 2 FLOP; SI 십진 단위; 데이터 이동량은 {level:을} 오가는 알고리즘 바이트"
                    "(각 커널은 입력을 한 번 읽고 출력을 한 번 쓴다, 원소 바이트 기준); {Tk:은} 실측 시간의 하한."),
    "free": "자유 변수: {symbols}. 아래 결과는 {symbols}에 대한 식이다.",
    "kernel": "커널 {name} ({ops})",
    "kernel_repeated": "커널 {name} ({ops}), {count}회 실행 (반복되는 본문; 합계에 {count}회 반영)",
    "step_bytes": "{n} 데이터 이동량 ({level}): (읽기 + 쓰기) × 원소 바이트",
    "read": "읽기", "write": "쓰기",
    "traffic": "{tensor} {direction} ({role}, {dtype}): {bytes}",
    "traffic_stated": "{direction} (파일에 명시): {bytes}",
    "step_flops": "{n} 연산량 (FMA = 2 FLOP)",
    "step_intensity": "{n} 산술 강도 {I:와} 임계 강도 {Istar} 비교",
    "critical_dtype": "{Istar:는} 이 커널이 계산하는 {dtype}의 피크로 구한다.",
    "step_attainable": "달성 가능 성능 {formula}",
    "step_times": "시간",
    "step_comms_title": "통신 (α–β 모델)",
    "step_comms": ("메시 축 {axis} 위의 {collective}, 칩당: p는 그룹의 칩 수, n은 칩마다 입력의 바이트; "
                   "링크는 {link}, 방향당 {bw}, 지연 {alpha}; {rule}."),
    "memory_title": "메모리 계층",
    "memory_levels": "계층별 데이터 이동량과 {Tm} (먼 계층부터); 가장 큰 값이 병목: {level}.",
    "tiling_matmul": ("타일링 {tile}: A 타일은 C 타일의 열마다 한 번, B 타일은 행마다 한 번 다시 읽히므로 "
                      "HBM 데이터 이동량은 타일 개수에서 나온다."),
    "tiling_limit": ("K가 커지면 I는 읽은 원소당 2·bm·bn/(bm + bn) FLOP으로 간다 (정사각 타일에서 장의 "
                     "\u201cI ≈ T\u201d); 바이트당으로는 b로 나눈 값, 2바이트 dtype이면 T/2 FLOP/B."),
    "tiling_held": "{tensor:는} {level}에 들어간다: HBM은 한 번, 다시 읽기는 {level}에서.",
    "fits": "작업 집합이 {stage}에 들어간다 (SM당 {capacity}).",
    "does_not_fit": "작업 집합이 {stage}에 들어가지 않는다 (SM당 {capacity}).",
    "fit_unknown": "작업 집합을 {stage} (SM당 {capacity})와 비교하라.",
    "flash": ("FlashAttention (Dao et al. 2022, 알고리즘 1), 온칩 크기 {M} 원소 ({C} 바이트): B_c는 ⌈M/(4·d)⌉ 이하에서 "
              "작업 집합 b·(2·B_c·d + 2·B_r·d + B_r·B_c) + 8·B_r이 {C}에 들어가는 가장 큰 블록이다 "
              "(K, V 블록, Q, O 블록, 점수 블록, fp32 행 최댓값과 합). K와 V는 한 번, Q는 {Tc}번 읽고, "
              "O는 {Tc}번 쓰고 {Tc} − 1번 읽으며, 행 통계는 {Tc} − 1번 쓰고 읽는다; 점수 행렬은 HBM에 가지 않는다."),
    "flash_theta": "N이 크면 이동량은 Θ(N²·d²/M): 올림을 뺀 주항은",
    "strided": ("접근 단위: 메모리는 {sector} 섹터 단위로 움직이므로, S 간격으로 n개 원소를 읽으면 "
                "n·min(S·b, sector) 바이트가 움직인다 (알고리즘 바이트 n·b 이상); 유효 대역폭은 알고리즘 바이트만 센다."),
    "efficiency": "효율 계수 (피크 대비 비율, 한 번만 적용; peak()와 bandwidth()는 원래 값): {items}.",
    "verdict_title": "판정",
    "memory-bound": ("{comparison:이므로} 메모리 바운드다. 코어를 늘려도 빨라지지 않는다 — "
                     "융합·재사용(타일링)·정밀도 축소로 I를 높여야 한다."),
    "compute-bound": ("{comparison:이므로} 연산 바운드다. 천장은 피크 FLOP/s — 텐서코어·점유율로 코어 "
                      "효율을 높인다."),
    "balanced": "{comparison:이므로} 꺾이는 점 위에 있다 — 연산과 메모리 시간이 같다.",
    "balanced_comms": ("{comparison:이므로} 링크와 가장 바쁜 다른 자원의 시간이 같다 — 통신과 나머지 사이의 "
                       "균형이며, 루프라인의 꺾이는 점이 아니다."),
    "launch-bound": ("런치 오버헤드가 연산 시간과 메모리 시간보다 길어서({comparison}) 런치 바운드다 — 커널을 융합하거나 "
                     "CUDA Graphs로 런치 수를 줄인다."),
    "depends": "이 커널은 {verdict}.",
    "comms-bound": ("{comparison:이므로} 통신 바운드다. 병목은 링크다 — 샤딩을 바꾸거나, 통신을 연산과 겹치거나, "
                    "더 빠른 링크를 쓴다."),
    "depends_free": "자유 변수의 값에 따라 다르다 (커널별 판정 참고).",
    "fusion": "융합: {before} → {after}",
    "fusion_kernels": "융합 전 커널: {before}. 융합 후: {after}.",
    "fusion_ends": "후 / 전: {x} = 1에서 {at_one}, {x} → ∞에서 {at_inf}",
    "pools_elsewhere": ("다른 하드웨어의 풀: {pools}. 아래의 모든 커널은 프로그램의 하드웨어 {name}에서 유도한다; "
                        "각 풀의 인스턴스는 costlang run이 제 하드웨어에서 보여 준다 (derive --hardware NAME으로 그곳에서 유도한다)."),
    "solve": "풀이 {name}",
    "equation": "{lhs} {rel} {rhs:을} {x}에 대해 푼다:",
    "set_aside": "파일의 값 {value:는} 제쳐 두고, {x:를} 자유 변수로 두고 푼다.",
    "tied": "모양이 맞도록, {x:가} 바뀌는 동안 {eq:이다}.",
    "where": "여기서 {items}.",
    "lifted": {"b": "원소당 바이트", "Istar": "임계 강도", "BW": "대역폭"},
    "condition": "{condition} 일 때 성립 ({expr}).",
    "scanned": "sympy가 이 방정식을 정확히 풀 수 없어 {x}를 수치로 찾았다: {low}부터 {high}까지 {points}개 점에서 "
               "lhs − rhs의 부호가 바뀌는 곳을 찾고, 정확한 식 위의 이분법으로 좁혔다 (이웃한 두 점 사이의 "
               "교차 두 개는 놓칠 수 있다).",
    "scan_none": "결정할 수 없음: sympy가 이 방정식을 정확히 풀 수 없고, {low}부터 {high}까지 {points}개 점에서 "
                 "lhs − rhs의 부호가 바뀌지 않는다. 훑어보기는 증명이 아니므로 판정을 말하지 않는다.",
    "validity": "닫힌 형태 {root}는 {conditions}일 때만 성립한다: 그때 풀이에 쓴 max()/min() 분기가 "
                "선택된다. 그 밖에서는 다른 분기가 {x}를 준다.",
    "regimes": "교차점 양쪽의 판정:",
    "every": "모든 {x}",
    "regime_words": {"memory-bound": "메모리 바운드", "compute-bound": "연산 바운드",
                     "fits": "메모리에 들어감", "does-not-fit": "메모리에 들어가지 않음", "equal": "같음"},
    "regime_is": {"memory-bound": "메모리 바운드인", "compute-bound": "연산 바운드인",
                  "fits": "메모리에 들어가는", "does-not-fit": "메모리에 들어가지 않는", "equal": "같은"},
    "case": "그 점에서 {parts}", "case_if": "{parts}인 경우",
    "case_bound": "{kernel:은} {bound}", "case_larger": "{term:이} 더 큼", "case_smaller": "{term:이} 더 작음",
    "satisfies": "{condition:을} 만족하는",
    "whole": "정수 {x}:",
    "whole_largest": "{predicate} 가장 큰 정수 {x}: {value}",
    "whole_smallest": "{predicate} 가장 작은 정수 {x}: {value}",
    "whole_accepted": "{form}부터 파일이 받아들이는 첫 값 {value} ({rejected} 거부: {reason})",
    "whole_none": "{form}부터 {count}개 안에 파일이 받아들이는 값 없음 ({rejected} 거부: {reason})",
    "holds": "{where}에서 성립한다.",
    "holds_nowhere": "관계를 만족하는 {x:는} 없다.",
    "or": " 또는 ",
    "no_crossing": "교차점이 없다: {extremum} {side} {value} {op} {other} {other_value}.",
    "so_every": "따라서 모든 {x}에서 {words}.",
    "crossing_needs": "교차점 {root:이} 있으려면 {condition:이어야} 한다",
    "limit": "{x}일 때 {side} {value}.",
    "approximation": "{symbol:이} 클 때의 근사: {expr}{exact}.",
    "exact": " (근 자체: {value})",
    "regime_map": "{x}에 따라 각 커널의 바운드가 바뀌는 지점:",
    "map_fixed": "{kernel}: 모든 {x}에서 {verdict}",
    "totals": "프로그램 전체 (커널 런치 {launches}회)",
    "bounds": ("여러 칩, 칩당: 하한은 통신이 연산·메모리와 완전히 겹친다고, 상한은 아무것도 겹치지 않는다고 "
               "가정한다 (커널 합계; 파이프라인 단계가 있으면 버블 때문에 × (m + p − 1)/m)."),
    "measured": "실측: 커널 {name}, 시간 {time}",
    "queries": "구하는 값",
    "per": {"chip": "칩 하나당", "system": "시스템 전체"},
    "summary_top": "시간이 가는 곳: 커널 {n}개 중 시간을 가장 많이 쓰는 {shown}개 (T_kernel × 횟수)",
    "summary_grows": "시간이 가는 곳: 커널 {n}개 중 {symbols}에 따라 시간이 가장 빨리 느는 {shown}개 (각각 10^6에서 비교)",
    "summary_rest": "나머지 커널 {others}개: {time} ({share})",
    "summary_others": "그 밖의 커널 {others}개",
    "summary_more": "모든 커널과 그 데이터 이동량, 달성 가능 성능: --kernels; 모든 값: --json",
    "cut_cells": "…는 {width}자에서 자른 식입니다: `costlang run --json`은 식 전체를, `costlang derive`는 그 유도를 보여 줍니다",
    "lets": "정의",
    "query_verdict": "{name}: {verdict}",
    "level_bound": "{level} 바운드",
    "undecided_solve": "sympy가 결정하지 못한 것: {items}.",
    "undecided_parts": {"regimes": "교차점 양쪽의 판정", "general form": "일반형", "limits": "극한",
                        "approximations": "근사", "conditions": "근이 양수인 조건",
                        "explanation": "교차점이 없는 이유"},
    "when": "{condition:이면} {bound}",
    "at": "{condition}에서 {bound}",
    "else": "아니면 {bound}",
    "aside": " ({notes})",
    "regime_join": ", ",
    "and": " 그리고 ",
    "undecided": "판정 불가 (sympy가 결정하지 못함)",
    "verdict_words": {"memory-bound": "메모리 바운드", "compute-bound": "연산 바운드",
                      "launch-bound": "런치 바운드", "balanced": "균형",
                      "comms-bound": "통신 바운드", "depends": "자유 변수에 따라 다름",
                      "undecided": "판정 불가 (sympy가 결정하지 못함)"},
    "role": {"input": "입력", "weight": "가중치", "cache": "캐시", "gradient": "기울기", "state": "상태",
             "intermediate": "중간 텐서", "output": "출력", "stated": "명시"},
    "plot": {"title": "루프라인: {hardware}의 {file}", "x": "산술 강도 I (FLOP/B)",
             "y": "도달 가능 성능", "kernel": "커널 {name}", "unfused": "융합 전 {name}",
             "kernels": "커널 {n}개 (가장 오래 걸리는 {top}개에 이름 표시)", "more": "{names} 외 {n}개",
             "peak": "{dtype} 피크 {value}",
             "not_drawn": "그리지 않음 (자유 변수에 따라 달라짐; --set이나 --over를 쓴다): {names}",
             "path": "{kernel}: {symbol} = {lo} … {hi}",
             "crossing": "{kernel}: {symbol} = {x} 아래 {below}, 그 점에서 {balanced}, 위 {above}",
             "crossing_at": "{symbol} = {x}에서 교차", "against": "{symbol}에 따른 {label}"},
    "figure_label": {"flops": "FLOPs", "bytes": "이동량", "intensity": "I", "t_kernel": "T_kernel",
                     "launches": "런치 수"},
}

PHRASES = {"en": _EN, "ko": _KO}
LANGUAGES = tuple(PHRASES)


def phrase(lang: str, key: str):
    """The phrase `key` in `lang` (a template string, or a small table for words).

    >>> phrase("ko", "verdict_words")["memory-bound"]
    '메모리 바운드'
    """
    return PHRASES[lang][key]
