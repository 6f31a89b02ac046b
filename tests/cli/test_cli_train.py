"""`costlang run FILE --train [SETTINGS]`: the file's forward as one training step."""
import json

from costlang.cli import main

FORWARD = """use hardware h100_sxm
dim B = 8
dim D = 1024
input x: bf16[B, D]
weight W1: bf16[D, 4096]
weight W2: bf16[4096, D]
y = gelu(x @ W1) @ W2
output y
"""


def _flops(capsys, *args):
    assert main(["run", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)["totals"]["flops"]


def test_train_on_the_command_line_is_the_train_statement(tmp_path, capsys):
    forward, step = tmp_path / "f.cost", tmp_path / "t.cost"
    forward.write_text(FORWARD)
    step.write_text(FORWARD + "train { }\n")
    # forward: 2 matmuls of 2·8·1024·4096 = 67,108,864 and gelu 10·8·4096 = 327,680 FLOP;
    # the step adds dh, dW2, dW1 (3 more matmuls) and gelu's gradient 14·8·4096 = 458,752
    assert _flops(capsys, str(forward)) == 2 * 67_108_864 + 327_680
    assert _flops(capsys, str(forward), "--train") == 5 * 67_108_864 + 327_680 + 458_752
    assert _flops(capsys, str(forward), "--train") == _flops(capsys, str(step))
    # a what-if keeps it: B = 16 doubles every term
    assert _flops(capsys, str(forward), "--train", "--set", "B=16") == 2 * (5 * 67_108_864 + 327_680 + 458_752)


def test_train_option_errors_are_positioned_on_the_option(tmp_path, capsys):
    forward, step = tmp_path / "f.cost", tmp_path / "t.cost"
    forward.write_text(FORWARD)
    step.write_text(FORWARD + "train { }\n")
    assert main(["run", str(forward), "--train", "zero = 7"]) == 2
    err = capsys.readouterr().err
    assert "--train:1:8: error: `zero` is one of 0, 1, 2, 3, not 7" in err
    assert main(["run", str(step), "--train", "zero = 7"]) == 2   # on a file's own statement: the same place
    err = capsys.readouterr().err
    assert "--train:1:8: error: `zero` is one of 0, 1, 2, 3, not 7" in err


def test_train_settings_edit_the_files_own_statement(tmp_path, capsys):
    # `--train SETTINGS` on a file that trains: its settings replace the statement's, as if edited
    edited, written = tmp_path / "e.cost", tmp_path / "w.cost"
    edited.write_text(FORWARD + "train { optimizer = sgd }\n")
    written.write_text(FORWARD + "train { optimizer = adamw; master = fp32 }\n")
    assert main(["run", str(edited), "--train", "optimizer = adamw; master = fp32", "--json"]) == 0
    a = capsys.readouterr().out
    assert main(["run", str(written), "--json"]) == 0
    b = capsys.readouterr().out
    assert a.replace(str(edited), "F") == b.replace(str(written), "F")
