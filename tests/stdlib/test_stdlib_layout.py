"""The stdlib's folders: the language's modules at the top, hardware presets in `hardware/`, the model
zoo in `models/`, and `import NAME` finding a file in any of them."""
from costlang import _resources, load_string


def test_every_stdlib_name_is_used_once():
    # `import NAME` searches the folders in order: a name in two folders would hide one of them
    names = [p.stem for p in _resources.stdlib_files()]
    assert len(names) == len(set(names))


def test_the_folders_hold_what_their_names_say():
    root = _resources.stdlib_dir()
    assert {p.stem for p in (root / "hardware").glob("*.cost")} == {"nvidia", "amd", "google", "intel", "systems"}
    assert {"llama3_70b", "llama3_8b", "mixtral_8x7b", "deepseek_v3"} <= {p.stem for p in (root / "models").glob("*.cost")}
    assert {"prelude", "dtypes", "ops", "collectives", "llm", "hardware", "train"} == {p.stem for p in root.glob("*.cost")}


def test_import_finds_a_model_of_the_zoo_and_a_vendor_module():
    # models/tinyllama_1b.cost defines the block; hardware/nvidia.cost (read again: imports are once) h100_sxm
    program = load_string("import tinyllama_1b\nimport nvidia\nuse hardware h100_sxm\ninput x: fp16[4]\ny = relu(x)").program
    assert "tinyllama_1b_decode" in program.blocks
    assert program.hardware["h100_sxm"].span.file.endswith("stdlib/hardware/nvidia.cost")
