"""Name resolution: AST modules (the prelude, imports, the main file) → one `Program`.

Input: the main file's `ast.Module`. Output: `ir.Program` with every name bound, every shape
inferred and checked, every unit checked. Semantic errors are collected and raised together,
in source order, as an `ErrorGroup`. Imports resolve relative to the importing file, or to the
stdlib for bare names; cycles are reported with the chain. A program with `shard` or `parallel`
statements is turned into the per-chip program afterwards, by `passes.shard` (api.py).
"""
from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Optional

import sympy

from costlang import _resources
from costlang.budget import running
from costlang.errors import (CostImportError, CostlangError, CostNameError, ErrorGroup, SemanticError,
                      ShapeError, Span, UnitError, did_you_mean)
from costlang.frontend.expr import MATH_FUNCTIONS, evaluate, unit_words
from costlang.ir.kinds import KINDS, check_arity, recording_equalities
from costlang.ir.program import (FUSION_MODES, Dtype, Measurement, OpSpec, Origin, Overrides, Program, SymbolDef,
                          Tensor, Value)
from costlang.units import BYTE, DIMENSIONLESS, FLOP, SECOND, Unit
from costlang.frontend import ast
from costlang.frontend.loader import read_module
from costlang.frontend.typecheck import RESULT_UNITS, STATIC_FUNCTIONS, NameScope, check_expression, static_call

__all__ = ["resolve", "RESULT_FUNCTIONS"]

#: functions over analysis results, usable in `let` and `query` (implemented in analysis.queries)
RESULT_FUNCTIONS = tuple(RESULT_UNITS) + ("bound", "with_fusion")


def resolve(module: ast.Module, path: Optional[Path] = None, prelude: bool = True,
            overrides: Optional[Overrides] = None) -> Program:
    """Resolve a parsed main file (and everything it imports) into a `Program`."""
    overrides = overrides or Overrides()
    r = _Resolver(module.source_name, overrides)
    r.main_dir = path.resolve().parent if path is not None else None
    with recording_equalities(r.program.equalities):
        if prelude and not _restore_prelude(r):
            r.import_path(_resources.stdlib_dir() / "prelude.cost", None)
        if path is None or path.resolve() not in r.loaded:  # a stdlib file is already loaded by the prelude
            if path is not None:
                r.stack.append(path.resolve())  # so that importing the main file again is a cycle
            r.run_module(module, path)
        if overrides.train is not None:  # `--train`: as if the file ended with `train { ... }`, or, when
            try:                         # it has one, as if its settings were edited (as `--set` edits)
                stated = getattr(r, "train_stmt", None)
                if stated is not None:
                    merged = {o.name: o for o in stated.options}
                    merged.update({o.name: o for o in overrides.train})
                    r.program.training = None
                    r.stmt_Train(ast.Train(tuple(merged.values()), stated.span), path)
                else:
                    r.stmt_Train(ast.Train(tuple(overrides.train), overrides.train_span), path)
            except CostlangError as e:
                r.errors.append(e)
        if r.program.training is not None and not r.errors:
            _derive_backward(r)
        elif r.program.recompute_calls and r.program.training is None:
            _, span = next(iter(r.program.recompute_calls.values()))
            r.errors.append(SemanticError("`recompute` is a training step's option, and this program does not train",
                                          span, "add `train { ... }` (or run it with --train)"))
        p = r.program
        if p.selected_hardware is None and p.pools:   # the first pool's hardware is the program's
            first = next(iter(p.pools.values()))
            p.selected_hardware, p.hardware_span = first.hardware, first.span
        try:
            r.check_selections()
        except CostlangError as e:
            r.errors.append(e)
    if r.errors:
        raise ErrorGroup([_with_settings(e, overrides.text) for e in r.errors])
    first = module.statements[0].span if module.statements else None
    r.program.origin = Origin(first.source if first else None, path, prelude, overrides)
    if first is not None:  # what a whole-file error points at, in a what-if's program too
        r.program.main_span = Span(first.source, first.line, first.column, first.line, first.column + 1)
    return r.program


#: the resolver's state after the prelude (the stdlib's dtypes, ops, presets, collectives and
#: systems), kept once per process: each what-if scenario resolves its file again, and the prelude
#: is the same every time. Restored only while none of the files it read has changed.
_PRELUDE: dict = {}
#: the resolver's containers that the prelude fills (the program's are all of its containers)
_RESOLVER_STATE = ("origin", "loaded", "poisoned", "let_values", "placeholders", "block_defs", "grad_defs")


def _restore_prelude(r: _Resolver) -> bool:
    """Fill a fresh resolver with the prelude's state (copies of every container, so that nothing
    is shared but the immutable IR values in them). False: resolve the prelude as written (the
    first time, or when a setting names something the prelude defines)."""
    path = (_resources.stdlib_dir() / "prelude.cost").resolve()
    snap = _PRELUDE.get(path)
    if snap is None or snap["stamps"] != _stamps(snap["loaded"]):
        snap = _PRELUDE[path] = _snapshot(path)
        if snap is None:
            del _PRELUDE[path]
            return False
    if not snap["values"].isdisjoint(r.overrides.symbols) or not snap["values"].isdisjoint(r.overrides.dtypes):
        return False
    for f in dataclasses.fields(Program):
        value = snap["program"][f.name]
        if f.name not in ("source_name", "equalities"):  # equalities: the list being recorded into (none)
            setattr(r.program, f.name, _copied(value))
    for name in _RESOLVER_STATE:
        setattr(r, name, _copied(snap[name]))
    r.static.lets = dict(snap["static_lets"])
    return True


def _snapshot(path: Path) -> Optional[dict]:
    """The state a resolver is in after the prelude, or None if the prelude had errors."""
    r = _Resolver("<prelude>")
    with recording_equalities(r.program.equalities):
        r.import_path(path, None)
    if r.errors or r.program.equalities:
        return None
    snap = {f.name: getattr(r.program, f.name) for f in dataclasses.fields(Program)}
    out = {"program": snap, "static_lets": dict(r.static.lets), "stamps": _stamps(r.loaded),
           "values": frozenset(name for (namespace, name) in r.origin if namespace == "value")}
    out.update({name: getattr(r, name) for name in _RESOLVER_STATE})
    return out


def _stamps(paths) -> tuple:
    out = []
    for p in sorted(paths):
        try:
            st = p.stat()
        except OSError:
            return ()
        out.append((p, st.st_mtime_ns, st.st_size))
    return tuple(out)


def _copied(value):
    return type(value)(value) if isinstance(value, (dict, list, set)) else value


def _derive_backward(r) -> None:
    from costlang.frontend.backward import derive_backward
    forward = tuple(r.program.nodes)
    if not forward:   # no step to time: its tokens per second and MFU would divide by zero
        r.errors.append(SemanticError("a training step needs an op to differentiate, and this program computes "
                                      "nothing", r.program.training.span,
                                      "compute the outputs from the weights (e.g. `y = x @ W`), then train"))
        return
    try:
        grads = derive_backward(r)
    except ErrorGroup as g:
        r.errors.extend(g.errors)
        return
    except CostlangError as e:
        r.errors.append(e)
        return
    r.program.training = dataclasses.replace(r.program.training, weight_grads=tuple(grads.items()),
                                                 forward_nodes=forward)
    from costlang.frontend.optimizer import finish_training
    try:
        finish_training(r)
    except ErrorGroup as g:
        r.errors.extend(g.errors)
    except CostlangError as e:
        r.errors.append(e)


def _with_settings(e: CostlangError, text: str) -> CostlangError:
    """An error found only under what-if settings names them: they are not in the quoted line."""
    if text:
        e.message = f"{e.message} (with {text})"
        e.args = (e.message,)
    return e


class _Resolver:
    def __init__(self, name: str, overrides: Overrides = Overrides()):
        self.program = Program(name)
        self.overrides = overrides
        self.errors: list[CostlangError] = []
        self.origin: dict[tuple[str, str], tuple[str, Span]] = {}  # (namespace, name) → (module, span)
        self.loaded: set[Path] = set()
        self.stack: list[Path] = []
        self.module_name = ""
        self.poisoned: set[str] = set()
        self.module_names: dict[str, Span] = {}  # names the current module defines, for hints
        self.let_values: dict[str, Value] = {}  # lets type-checked so far: each is evaluated once
        self.placeholders: dict[tuple, sympy.Dummy] = {}  # result functions while type-checking
        self.static = _StaticScope(self)
        self.scope_path = ""                 # the block instance being resolved ("" at the top)
        self.repeat_path: tuple[str, ...] = ()  # the repeats around it
        self.block_stack: list[str] = []     # blocks being instantiated (recursion is an error)
        self.block_claims: list[set] = []    # the names each of them defines (frontend.blocks)
        self.block_count = 0                 # block instances made so far (frontend.blocks.MAX_INSTANCES)
        self.import_count = 0                # imports with arguments or a namespace (frontend.imports)
        self.import_memo: dict = {}          # their statements, by (path, arguments, namespace)
        self.sharing: list[tuple] = []       # (instance, the instance whose weights it shares, span)
        self.block_defs: dict[str, ast.BlockDef] = {}  # blocks as written (Program.blocks: their signatures)
        self.grad_defs: dict[str, ast.GradDef] = {}    # ops' gradients as written (frontend.backward)
        self.expr_base = ""                  # the target that sub-expressions are named after
        self.kernel_names: dict[str, str] = {}  # a block's result tensor → the name of its kernel
        self.depth = 0                       # modules being run (1: the main file or the prelude)
        self.top_names: dict[str, Span] = {}  # the names the main file defines
        self.top_statement = None            # the main file's statement being resolved
        self.selections: list = []           # (span, hardware, system, in the main file) of each `use`
        self.main_dir: Optional[Path] = None  # imports stay in the main file's folder (or the stdlib)

    def silenced(self, span: Optional[Span]) -> CostlangError:
        """An error that is not reported (a follow-on of one already said)."""
        return _Silenced("a follow-on error", span)

    # --- modules and imports ---------------------------------------------------------------
    def run_module(self, module: ast.Module, path: Optional[Path]) -> None:
        outer, outer_names = self.module_name, self.module_names
        self.module_name = str(path) if path else module.source_name
        self.module_names = _defined_names(module)
        self.depth += 1
        if self.depth == 1:  # the main file (or the prelude): where a what-if's error points
            self.top_names = self.module_names
        for stmt in module.statements:
            if self.depth == 1:
                self.top_statement = stmt
            try:
                with running("resolving this statement", stmt.span if self.depth == 1 else None):
                    getattr(self, "stmt_" + type(stmt).__name__)(stmt, path)
            except ErrorGroup as g:
                self.errors.extend(e for e in g.errors if not isinstance(e, _Silenced))
            except CostlangError as e:
                if not isinstance(e, _Silenced):
                    self.errors.append(e)
                self._poison(stmt)
        self.depth -= 1
        self.module_name, self.module_names = outer, outer_names

    def import_path(self, target: Path, span: Optional[Span]) -> None:
        try:
            target = target.resolve()
        except (OSError, RuntimeError):  # a loop of symbolic links (RuntimeError before Python 3.13)
            raise CostImportError(f"cannot import {target}: it is a loop of symbolic links", span) from None
        if target in self.stack:
            chain = " → ".join(p.name for p in self.stack[self.stack.index(target):] + [target])
            raise CostImportError(f"import cycle: {chain}", span)
        if target in self.loaded:
            return
        self.loaded.add(target)
        self.stack.append(target)
        try:
            self.run_module(read_module(target, span), target)
        finally:
            self.stack.pop()

    def stmt_Import(self, s: ast.Import, path: Optional[Path]) -> None:
        if s.is_path:
            base = path.parent if path else Path.cwd()
            target = base / s.target
        else:
            target = _resources.stdlib_module(s.target)
        _check_import_target(s, target, path)
        if s.is_path:
            _check_inside(s, target, self.main_dir)
        if s.args or s.alias is not None:
            from costlang.frontend.imports import import_with  # arguments and namespaces
            import_with(self, s, target)
            return
        self.import_path(target, s.span)

    # --- definitions ----------------------------------------------------------------------
    def define(self, namespace: str, name: str, span: Span, overridable: bool = False) -> None:
        key = (namespace, name)
        if key in self.origin:
            module, first = self.origin[key]
            # a file may redefine a stdlib op, dtype or hardware; two of the user's files may not
            if not (overridable and module != self.module_name and _is_stdlib(module)):
                raise SemanticError(f"'{name}' is already defined (at line {first.line}"
                                    f"{'' if first.file == span.file else ' of ' + first.file})",
                                    span, "every name is assigned once; pick a new name" if first.file == span.file
                                    else "a name may be defined in one file only; import the other "
                                    "file under a name of its own (`import \"x.cost\" as x`)")
        self.origin[key] = (self.module_name, span)

    def stmt_Binding(self, s: ast.Binding, path) -> None:
        self.define("value", s.name, s.span)
        assumptions = {"integer": True} if s.kind == "dim" else {}
        symbol = sympy.Symbol(s.name, positive=True, **assumptions)
        value = None
        if s.name in self.overrides.symbols:  # a what-if: as if the file gave this value
            value = self.overrides.symbols[s.name]  # in free symbols only (frontend.variants)
        elif s.value is not None:
            v = self.expect(s.value, DIMENSIONLESS, f"the value of {s.kind} '{s.name}'")
            value = v.expr
            bound = value.xreplace(self.program.bindings)
            if bound.is_number and not bound.is_positive:
                raise SemanticError(f"{s.kind} '{s.name}' must be positive, not {bound}", s.value.span)
            if s.kind == "dim" and bound.is_number and not bound.is_integer:
                raise SemanticError(f"dim '{s.name}' counts elements and must be a whole number, "
                                    f"not {bound}", s.value.span, "use `param` for a real-valued parameter")
        self.program.add_symbol(SymbolDef(s.name, symbol, s.kind, value, s.span))

    def stmt_DtypeDef(self, s: ast.DtypeDef, path) -> None:
        self.define("dtype", s.name, s.span, overridable=True)
        size = self.expect(s.size, BYTE, f"the size of dtype '{s.name}'", plain_ok=True).expr
        if size.is_number and not size.is_positive:
            raise SemanticError(f"dtype '{s.name}' must have a positive size, not {size}", s.size.span)
        self.program.dtypes[s.name] = Dtype(s.name, size, s.span)

    def stmt_OpDef(self, s: ast.OpDef, path) -> None:
        self.define("op", s.name, s.span, overridable=True)
        if s.kind.id == "collective":
            from costlang.frontend.collectives import collective_spec
            self.program.ops[s.name] = collective_spec(self, s)
            return
        if s.kind.id not in KINDS:
            raise SemanticError(f"unknown op kind '{s.kind.id}'", s.kind.span,
                                did_you_mean(s.kind.id, KINDS) or f"kinds are: {', '.join(KINDS)}")
        flops = sympy.Integer(0)
        for o in s.options:
            if o.name != "flops":
                raise SemanticError(f"unknown op option '{o.name}'", o.span, "ops take `flops = ...`")
            flops = self.amount(o.value, FLOP, "an op's FLOPs per element")
        spec = OpSpec(s.name, s.params, s.kind.id, flops, s.span)
        check_arity(spec, s.span)
        self.program.ops[s.name] = spec

    def stmt_TensorDecl(self, s: ast.TensorDecl, path) -> None:
        self.define("value", s.name, s.span)
        dtype = self.dtype(s.type.dtype, s.type.dtype_span)
        shape = self.shape(s.type)
        if s.frozen and s.role != "weight":
            raise SemanticError(f"only a weight can be frozen; '{s.name}' is {'an' if s.role == 'input' else 'a'} "
                                f"{s.role}", s.span, "a training step updates weights; inputs and caches have no gradient")
        tensor = self.stored(Tensor(s.name, dtype, shape, s.role, s.span, s.name, self.repeat_path,
                                    frozen=s.frozen))
        if s.role == "weight" and self.sharing:
            from costlang.frontend.blocks import shared_weight
            tensor = shared_weight(self, tensor)
        self.program.tensors[s.name] = tensor

    def stored(self, tensor: Tensor) -> Tensor:
        """A tensor as a what-if stores it (`W = int8`, `weights = int4`): views of it follow."""
        new = self.overrides.dtypes.get(tensor.name) if tensor.storage == tensor.name else None
        if new is None or new == tensor.dtype.name:
            return tensor
        if new not in self.program.dtypes:
            raise self._defined_later(tensor, new)
        return dataclasses.replace(tensor, dtype=self.program.dtypes[new])

    def _defined_later(self, tensor: Tensor, name: str) -> CostlangError:
        """A what-if stores a tensor in a dtype the file defines only after it: the same error as
        writing that dtype in the declaration, at the user's line (the declaration when it is in the
        main file, else the main file's statement that made it, such as a block call)."""
        later = self.top_names.get(name)
        here = tensor.span
        if here is None or later is None or here.file != later.file:
            top = self.top_statement
            here = top.span if top is not None and getattr(top, "span", None) is not None else here
        where = f"later, at line {later.line}" if later is not None else "later in the file"
        return SemanticError(f"'{tensor.name}' cannot be stored as '{name}': dtype '{name}' is defined {where}",
                             here, f"define '{name}' before line {here.line}" if here is not None else None)

    def stmt_Assign(self, s: ast.Assign, path) -> None:
        from costlang.frontend.blocks import assign  # ops, tensor expressions, block calls and repeats
        assign(self, s)

    def subexpression(self, expr: ast.Expr, base: str):
        """The tensor a nested op expression computes (for `operands.tensor_arg`), or None."""
        from costlang.frontend.blocks import subexpression
        return subexpression(self, expr, base)

    def stmt_BlockDef(self, s: ast.BlockDef, path) -> None:
        from costlang.frontend.blocks import define_block
        define_block(self, s)

    def stmt_GradDef(self, s: ast.GradDef, path) -> None:
        from costlang.frontend.backward import define_grad
        define_grad(self, s)

    def stmt_Train(self, s: ast.Train, path) -> None:
        from costlang.frontend.training import train_statement
        train_statement(self, s)
        if self.depth == 1 and s.span.source is not None and not s.span.source.name.startswith("--"):
            self.train_stmt = s   # the file's own statement, which `--train` settings edit

    def stmt_Return(self, s: ast.Return, path) -> None:
        raise SemanticError("`return` belongs inside a block", s.span)

    def stmt_OutputMark(self, s: ast.OutputMark, path) -> None:
        for n in s.names:
            if n.id not in self.program.tensors:
                raise self.unknown(n, "tensor", self.program.tensors)
            if self.program.tensors[n.id].role in ("input", "weight"):
                raise SemanticError(f"'{n.id}' is an {self.program.tensors[n.id].role}; only computed "
                                    "tensors can be outputs", n.span)
            self.program.outputs.add(n.id)

    def stmt_HardwareDef(self, s: ast.HardwareDef, path) -> None:
        from costlang.frontend.hardware import resolve_hardware
        self.define("hardware", s.name, s.span, overridable=True)
        self.program.hardware[s.name] = resolve_hardware(self, s)

    def stmt_Use(self, s: ast.Use, path) -> None:
        if s.kind == "scenario":   # applied once the file is resolved (`api`), as `--set` would be
            if s.hardware.id not in self.program.scenarios:
                raise self.unknown(s.hardware, "scenario", self.program.scenarios)
            if self.depth != 1:
                raise SemanticError("only the main file may use a scenario", s.span,
                                    "move `use scenario` to the file you run")
            if self.program.used_scenario is not None:
                raise SemanticError(f"a scenario is already used (at line {self.program.used_scenario[1].line})",
                                    s.span, "a file uses one scenario; put every setting in it")
            self.program.used_scenario = (s.hardware.id, s.span)
            return
        if s.kind == "system":
            from costlang.frontend.system import select_system
            select_system(self, s)
            return
        if s.hardware.id not in self.program.hardware:
            raise self.unknown(s.hardware, "hardware", self.program.hardware)
        if self.program.hardware_span and self.program.hardware_span.file == s.span.file:
            raise SemanticError("hardware is already selected in this file (at line "
                                f"{self.program.hardware_span.line})", s.span)
        self.select_hardware(s.span, s.hardware.id, None)

    def select_hardware(self, span: Span, hardware: str, system: Optional[str]) -> None:
        """`use hardware` or `use system`: the main file's line stands whatever its imports select;
        two imported files that select different hardware are an error (`check_selections`)."""
        main = self.depth == 1
        earlier_main = any(m for *_, m in self.selections)
        self.selections.append((span, hardware, system, main))
        if earlier_main and not main:
            return
        p = self.program
        p.selected_hardware, p.selected_system, p.hardware_span = hardware, system, span

    def check_selections(self) -> None:
        """One program runs on one hardware: imported files' `use` lines that differ, with none in the
        main file to settle it, are an error naming both lines."""
        if not self.selections or any(m for *_, m in self.selections):
            return
        first_span, *first = self.selections[0][:3]
        for span, hardware, system, _ in self.selections[1:]:
            if [hardware, system] != first:
                raise SemanticError(
                    f"{_selection(hardware, system)} is selected here, and {_selection(*first)} at "
                    f"{first_span.file}:{first_span.line}: one program runs on one hardware", span,
                    "select it once: a `use hardware NAME` line in the main file settles it for every "
                    "import, or remove one of these lines")

    def stmt_SystemDef(self, s: ast.SystemDef, path) -> None:
        from costlang.frontend.system import resolve_system
        self.define("system", s.name, s.span, overridable=True)
        self.program.systems[s.name] = resolve_system(self, s)

    def stmt_PoolDef(self, s: ast.PoolDef, path) -> None:
        from costlang.frontend.pools import resolve_pool
        self.define("pool", s.name, s.span)
        self.program.pools[s.name] = resolve_pool(self, s)

    def stmt_Shard(self, s: ast.Shard, path) -> None:
        from costlang.frontend.sharding import shard_statement
        shard_statement(self, s)

    def stmt_Parallel(self, s: ast.Parallel, path) -> None:
        from costlang.frontend.sharding import parallel_statement
        parallel_statement(self, s)

    def stmt_Let(self, s: ast.Let, path) -> None:
        self.define("value", s.name, s.span)
        check_expression(self, s.value)
        self.program.lets[s.name] = s   # the AST's record is the IR's (ir.statements)
        try:  # evaluate it now, so that a long chain of lets is never evaluated recursively
            self.static.name(ast.Name(s.name, s.span))
        except CostlangError:
            pass  # a let over analysis results has no value yet; errors are reported where it is used

    def stmt_Query(self, s: ast.Query, path) -> None:
        check_expression(self, s.value, whole_query=True)
        if any(q.name == s.name for q in self.program.queries):
            raise SemanticError(f"a query named {s.name!r} already exists", s.span)
        self.program.queries.append(s)

    def stmt_Measure(self, s: ast.Measure, path) -> None:
        whole = s.target.id == "step" and "step" not in self.program.nodes and "step" not in self.program.instances
        if not whole and s.target.id not in self.program.nodes and s.target.id not in self.program.instances:
            # a block instance is measured as one kernel (analysis.measured checks it is one)
            raise self.unknown(s.target, "kernel", self.program.nodes)
        if s.target.id in self.program.measurements:
            first = self.program.measurements[s.target.id].span
            raise SemanticError(f"'{s.target.id}' is measured twice (first at line {first.line})", s.span,
                                "keep one `measure` block per kernel")
        opts = self.options(s.options, {"time": SECOND, "traffic": BYTE}, "measure")
        if "time" not in opts:
            raise SemanticError("a measurement needs `time = ...`", s.span)
        if not opts["time"].is_positive and opts["time"].is_number:
            raise SemanticError("a measured time must be positive", s.span)
        self.program.measurements[s.target.id] = Measurement(s.target.id, opts["time"],
                                                              opts.get("traffic"), s.span)

    def stmt_FusionMode(self, s: ast.FusionMode, path) -> None:
        if s.mode.id not in FUSION_MODES:
            raise SemanticError(f"unknown fusion mode '{s.mode.id}'", s.mode.span,
                                f"modes are: {', '.join(FUSION_MODES)}")
        self.program.fusion = s.mode.id

    def stmt_Solve(self, s: ast.Solve, path) -> None:
        from costlang.frontend.variants import check_solve
        check_solve(self, s)
        self.program.solves.append(s)

    def stmt_Scenario(self, s: ast.Scenario, path) -> None:
        from costlang.frontend.variants import check_scenario
        self.define("scenario", s.name, s.span)
        check_scenario(self, s)
        self.program.scenarios[s.name] = s

    def stmt_Explore(self, s: ast.Explore, path) -> None:
        if self.depth == 1:   # a search of an imported file is that file's own business
            self.program.explores.append(s)

    def stmt_Compare(self, s: ast.Compare, path) -> None:
        for n in s.scenarios:
            if n.id != "baseline" and n.id not in self.program.scenarios:
                raise self.unknown(n, "scenario", ["baseline", *self.program.scenarios])
        self.program.compares.append(s)

    # --- helpers used by the statement handlers and by calls/hardware ----------------------
    def expect(self, expr: ast.Expr, unit: Unit, what: str, plain_ok: bool = False) -> Value:
        """Evaluate a static expression and check its unit (a plain number may stand for it)."""
        v = evaluate(expr, self.static)
        if v.unit != unit and not (plain_ok and v.unit == DIMENSIONLESS):
            raise UnitError(f"{what} must be {unit_words(unit)}, not {unit_words(v.unit)}", expr.span)
        return Value(v.expr, unit)

    def options(self, options, allowed: dict[str, Unit], where: str) -> dict[str, sympy.Expr]:
        out = {}
        for o in options:
            if o.name not in allowed:
                raise SemanticError(f"unknown {where} option '{o.name}'", o.span,
                                    did_you_mean(o.name, allowed) or f"{where} takes: {', '.join(allowed)}")
            if o.name in out:
                raise SemanticError(f"'{o.name}' is given twice", o.span)
            plain_ok = allowed[o.name] in (FLOP, BYTE)
            out[o.name] = self.amount(o.value, allowed[o.name], f"'{o.name}'", plain_ok)
        return out

    def amount(self, expr: ast.Expr, unit: Unit, what: str, plain_ok: bool = True) -> sympy.Expr:
        """A count of FLOPs, bytes or seconds: `expect`ed in `unit`, and never negative."""
        value = self.expect(expr, unit, what, plain_ok=plain_ok).expr
        bound = value.xreplace(self.program.bindings)
        if bound.is_number and bound.is_negative:
            raise SemanticError(f"{what} cannot be negative, not {bound}", expr.span)
        return value

    def dtype(self, name: str, span: Span) -> Dtype:
        if name not in self.program.dtypes:
            if name in self.poisoned or name in self.module_names:
                raise self.unknown(ast.Name(name, span), "dtype", self.program.dtypes)
            raise CostNameError(f"unknown dtype '{name}'", span,
                                did_you_mean(name, self.program.dtypes) or "declare it with `dtype NAME = SIZE B`")
        return self.program.dtypes[name]

    def shape(self, t: ast.TensorType) -> tuple:
        dims = []
        for d in t.dims:
            e = self.expect(d, DIMENSIONLESS, "a dimension").expr
            bound = e.xreplace(self.program.bindings)
            if bound.is_number and not (bound.is_integer and bound.is_positive):
                raise ShapeError(f"a dimension must be a positive whole number, not {bound}", d.span)
            if not bound.is_number and not (bound.is_integer and bound.is_positive) \
                    and all(bound != size for size, _ in self.program.sizes):
                self.program.sizes.append((bound, d.span))  # N - M with N free: an assumption
            dims.append(e)
        return tuple(dims)

    def unknown(self, name: ast.Name, what: str, known) -> CostlangError:
        if name.id in self.poisoned:
            return _Silenced(name.span)
        later = self.module_names.get(name.id)
        if later is not None and later.file == name.span.file and later.line > name.span.line:
            hint = f"'{name.id}' is defined later, at line {later.line}; define it before this line"
        else:
            names = list(known)  # the names known now, searched only if the error is shown
            if what == "hardware":
                from costlang.errors import hardware_hint
                systems = list(self.program.systems)
                hint = lambda: hardware_hint(name.id, names, systems) or _unit_hint(name.id)  # noqa: E731
            else:
                after_unit = _after_unit(name.span)
                hint = lambda: did_you_mean(name.id, names) or _unit_hint(name.id, after_unit)  # noqa: E731
        return CostNameError(f"unknown {what} '{name.id}'", name.span, hint)

    def _poison(self, stmt) -> None:
        for attr in ("name",):
            if isinstance(getattr(stmt, attr, None), str):
                self.poisoned.add(getattr(stmt, attr))


def _selection(hardware: str, system: Optional[str]) -> str:
    """What a `use` line selects, in words: `system NAME` or `hardware NAME`."""
    return f"system {system}" if system is not None else f"hardware {hardware}"


def _is_stdlib(module: str) -> bool:
    try:
        return _resources.in_stdlib(Path(module))
    except (OSError, ValueError):
        return False


def _defined_names(module: ast.Module) -> dict[str, Span]:
    """The names a module's statements define, each with the span of its definition."""
    out: dict[str, Span] = {}
    for stmt in module.statements:
        name = getattr(stmt, "name", None)
        if isinstance(name, str) and not isinstance(stmt, ast.Query):
            out.setdefault(name, stmt.span)
    return out


_UNIT_NAME = re.compile(r"(?:[kMGTPE]i?)?(?:FLOP|B)|[mun]?s")  # the grammar's UNIT, without "/s"


def _unit_hint(name: str, after_unit: bool = True) -> Optional[str]:
    """A unit's name where a name was expected: written as a unit (after `/`, as in `4 GB/s/s`), say how
    units are written; elsewhere (`fp16[B, 8]`) it is more likely a size that was never declared."""
    if not _UNIT_NAME.fullmatch(name):
        return None
    if after_unit:
        return f"'{name}' is a unit: write it right after a number, e.g. `1 {name}`"
    return (f"did you forget `dim {name}`? ('{name}' is also a unit: as one, write it right after a number, "
            f"e.g. `1 {name}`)")


def _after_unit(span) -> bool:
    """Whether the text just before `span` is a `/` or a number (the name stands where a unit would)."""
    if span is None or span.source is None:
        return True
    before = span.source.line(span.line)[:span.column - 1].rstrip()
    return before.endswith("/") or (before[-1:].isdigit() if before else False)


def _check_import_target(s: ast.Import, target: Path, importer: Optional[Path]) -> None:
    """Only existing `.cost` files can be imported: a quoted path, or a bare stdlib module name."""
    if s.is_path and target.suffix != ".cost":
        raise CostImportError(f"cannot import \"{_shown(s.target)}\": only .cost files can be imported", s.span)
    try:
        found = target.is_file()
    except OSError:  # a path too long for the system
        raise CostImportError(f"cannot import \"{_shown(s.target)}\": the path is too long", s.span) from None
    if found and s.is_path:
        _check_link(s, target, importer)
    if found:
        return
    if s.is_path and os.path.lexists(target):
        raise CostImportError(f"cannot import \"{_shown(s.target)}\": it is not a regular file (a folder, a "
                              "device, a FIFO or a loop of symbolic links)", s.span)
    if s.is_path:
        shown = os.path.normpath(os.path.join(os.path.dirname(s.span.file) if importer else "", s.target))
        relative_to = "the importing file" if importer else "the current directory"
        raise CostImportError(f"cannot import \"{_shown(s.target)}\": there is no file {_shown(shown)}", s.span,
                              f"a quoted path is relative to {relative_to}")
    known = sorted(p.stem for p in _resources.stdlib_files())
    models = sorted(p.stem for p in _resources.stdlib_files() if p.parent.name == "models")
    close = did_you_mean(s.target, known)
    family = s.target.split("_")[0].rstrip("0123456789").lower()   # `llama3_405b` → llama
    if len(family) >= 3 and any(m.startswith(family) for m in models):   # a model the zoo does not have
        close = (f"{close + ' ' if close else ''}the model zoo has {', '.join(models)} "
                 "(`costlang models` lists them with their sources)")
    raise CostImportError(f"cannot import '{s.target}': the stdlib has no module of that name", s.span,
                          close or f"stdlib modules: {', '.join(known)}; "
                          f"to import a file, quote its path: import \"{s.target}.cost\"")


def _shown(target: str, width: int = 60) -> str:
    """An import string as messages show it: at most `width` characters."""
    return target if len(target) <= width else target[: width - 1] + "…"


def _check_link(s: ast.Import, target: Path, importer: Optional[Path]) -> None:
    """A symbolic link may not lead an import out of the importing file's folder (a link to
    ~/.ssh/config or /proc/self/environ would otherwise be read, and quoted in its errors)."""
    written = os.path.normpath(os.path.abspath(target))
    real = os.path.realpath(target)
    if real == written:
        return  # no link on the way: the path says where it goes
    base = os.path.realpath(importer.parent if importer else Path.cwd())
    if os.path.commonpath([base, real]) != base:
        raise CostImportError(f"cannot import \"{_shown(s.target)}\": it is a symbolic link to a file outside "
                              f"the folder of the importing file", s.span,
                              "copy the file into the folder, or import it by its own path")


def _check_inside(s: ast.Import, target: Path, main_dir: Optional[Path]) -> None:
    """A quoted import may not leave the main file's folder (by `../` or an absolute path), unless it
    names a stdlib file: a `.cost` file from elsewhere on the machine would be read, and its lines
    quoted in errors. (Files in folders below the main file's may import each other freely.)"""
    base = os.path.realpath(main_dir if main_dir is not None else Path.cwd())
    real = os.path.realpath(target)
    if os.path.commonpath([base, real]) == base or _is_stdlib(real):
        return
    raise CostImportError(f"cannot import \"{_shown(s.target)}\": it is outside the folder of the main file",
                          s.span, "copy the file into that folder (or a folder below it), or run costlang "
                          "on a main file in a folder that holds both")


class _Silenced(CostlangError):
    """A follow-on error about a name whose definition already failed: not reported."""


class _StaticScope(NameScope):
    """Names and functions whose values are known while resolving: symbols, lets, sizes."""

    def __init__(self, r: _Resolver):
        super().__init__(r)
        self.lets: dict[str, object] = {}  # let → its Value, or the error its evaluation raised

    def let(self, name: str) -> Value:
        if name not in self.lets:
            try:
                self.lets[name] = evaluate(self.r.program.lets[name].value, self)
            except CostlangError as e:
                self.lets[name] = e
        if isinstance(self.lets[name], CostlangError):
            raise self.lets[name]
        return self.lets[name]

    def call(self, node: ast.Call) -> Value:
        if node.func in RESULT_FUNCTIONS:
            raise SemanticError(f"{node.func}() depends on the analysis and can only be used in a "
                                "`let` or `query`", node.span)
        if node.func not in STATIC_FUNCTIONS:
            raise CostNameError(f"unknown function '{node.func}'", node.func_span,
                                did_you_mean(node.func, STATIC_FUNCTIONS + tuple(MATH_FUNCTIONS)))
        return static_call(self.r, node)
