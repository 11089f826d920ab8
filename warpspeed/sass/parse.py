"""Parse ``cuobjdump -sass`` listings into the instruction stream of a full warp.

A SASS line reads ``/*0070*/  @!P0 ISETP.GE.AND P0, PT, R0, c[0x0][0x160], PT ;``: the address,
an optional guard predicate, the opcode with its dot-separated modifiers and the operands, the
destination first (stores, branches and barriers have none). Registers are ``R``, ``P``, ``UR`` and
``UP`` followed by a number; ``RZ``, ``PT``, ``URZ`` and ``UPT`` are constants and not recorded.
A memory operand ``[R2.64+0x8]`` reads its address registers. Instructions that write no register
(stores, ``EXIT``, ``BRA``, ``BAR``, compare-and-set into ``PT`` only) get an empty ``dst``.

The path a full warp takes in a generated stencil kernel is the straight-line code: every
instruction from the start up to the first unpredicated ``EXIT`` (predicated-off instructions
still issue; nvcc's self-branch after the exit is padding). A warp whose threads all fail the
guard issues the prefix up to the first predicated ``EXIT`` (or predicated branch to the exit).
Kernels with loops are recorded once through the loop body (documented limitation).
"""

from __future__ import annotations

import re

from warpspeed.errors import WarpspeedError
from warpspeed.sass.instructions import Instruction, InstructionStream

_LINE = re.compile(r"/\*(?P<pc>[0-9a-f]{4,})\*/\s+(?P<body>[^;]*);", re.IGNORECASE)
_PRED = re.compile(r"^@(?P<pred>!?U?P[0-9T])\s+")
_REGISTER = re.compile(r"\b(U?R\d+|U?P\d)\b")
_CONST = re.compile(r"c\[0x[0-9a-f]+\]\[[^\]]+\]", re.IGNORECASE)
#: Opcodes that write no register operand (their first operand is a source).
_NO_DESTINATION = frozenset(("STG", "ST", "STS", "STL", "RED", "BRA", "EXIT", "BAR", "BSYNC", "BSSY", "RET", "CALL",
                             "NOP", "WARPSYNC", "MEMBAR", "DEPBAR", "JMP", "YIELD", "ERRBAR", "KILL", "BPT"))
#: Modifier spellings of MMA shapes (m, n, k). Warp MMAs concatenate the digits of m, n, k, with
#: n = 8 and m 8 or 16 in every shape of PTX's ``mma.sync`` (NVIDIA, "Parallel Thread Execution
#: ISA", section "Warp Level Matrix Multiply-Accumulate Instructions", matrix shapes m8n8k4 to
#: m16n8k256): ``884``, ``1688``, ``16816``, ``8816``, ``16832``, ``16864``, ``168256``. Hopper
#: writes them with ``x`` (``DMMA.16x8x16``, ``HGMMA.64x128x16``). Spellings checked with
#: cuobjdump of nvcc 13.0 for sm_80 and sm_90a.
_SHAPE = re.compile(r"^(?:(?P<m>8|16)8(?P<k>\d{1,3})|(?P<xm>\d+)x(?P<xn>\d+)x(?P<xk>\d+))$")
_MMA = frozenset(("HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA"))
#: Opcodes whose second operand, when it is a predicate, is a second destination (carry out of
#: IADD3/LEA, the second result of the set-predicate instructions).
_SECOND_PREDICATE_DESTINATION = frozenset(("IADD3", "LEA", "ISETP", "FSETP", "DSETP", "HSETP2", "LOP3", "PLOP3"))
_PREDICATE_OPERAND = re.compile(r"^!?U?P(\d|T)$")


class SassError(WarpspeedError):
    """A listing that is not cuobjdump SASS."""


def mma_shape(modifier: str) -> tuple[int, int, int] | None:
    """(m, n, k) of an MMA shape modifier (see :data:`_SHAPE`): ``16816`` -> (16, 8, 16), ``8816`` ->
    (8, 8, 16), ``884`` -> (8, 8, 4), ``64x128x16`` -> (64, 128, 16); None for other modifiers."""
    match = _SHAPE.match(modifier)
    if not match:
        return None
    if match["xm"]:
        return int(match["xm"]), int(match["xn"]), int(match["xk"])
    return int(match["m"]), 8, int(match["k"])


def _memory_bytes(opcode: str, modifiers: tuple[str, ...]) -> int:
    """Bytes per thread of a load or store from its width modifier (default 32 bit)."""
    for m, size in (("128", 16), ("64", 8), ("U16", 2), ("S16", 2), ("U8", 1), ("S8", 1)):
        if m in modifiers:
            return size
    return 4


def parse_instruction(pc: int, body: str) -> Instruction:
    """One SASS instruction from the text between the address comment and the semicolon."""
    body = body.strip()
    predicate = None
    m = _PRED.match(body)
    if m:
        predicate = m.group("pred")
        body = body[m.end():]
    head, _, operand_text = body.partition(" ")
    parts = head.split(".")
    opcode, modifiers = parts[0], tuple(parts[1:])
    operands = [o.strip() for o in operand_text.split(",") if o.strip()]
    dst: tuple[str, ...] = ()
    sources = operands
    if operands and opcode not in _NO_DESTINATION and not operands[0].startswith("["):
        dst = tuple(_REGISTER.findall(operands[0]))
        sources = operands[1:]
        if opcode in _SECOND_PREDICATE_DESTINATION and sources and _PREDICATE_OPERAND.match(sources[0]):
            dst = dst + tuple(_REGISTER.findall(sources[0]))
            sources = sources[1:]
    src = tuple(r for o in sources for r in _REGISTER.findall(o))
    if predicate:
        src = src + (predicate.lstrip("!"),)
    shape = next((s for s in (mma_shape(x) for x in modifiers) if s), None) if opcode in _MMA else None
    ins = Instruction(opcode=opcode, modifiers=modifiers, dst=dst, src=src, predicate=predicate, pc=pc,
                      const_operands=len(_CONST.findall(operand_text)), tensor_shape=shape)
    if ins.space in ("global", "shared", "local"):
        ins = Instruction(opcode=opcode, modifiers=modifiers, dst=dst, src=src, predicate=predicate, pc=pc,
                          bytes=_memory_bytes(opcode, modifiers), const_operands=ins.const_operands)
    return ins


def parse_listing(text: str, function: str | None = None) -> list[Instruction]:
    """Every instruction of ``function`` (default: the first function) in a ``cuobjdump -sass``
    listing, in address order."""
    blocks = re.split(r"\n\s*Function : ", "\n" + text)
    if len(blocks) < 2:
        raise SassError("no 'Function :' section in the listing; expected the output of cuobjdump -sass")
    chosen = blocks[1]
    if function is not None:
        named = [b for b in blocks[1:] if b.split("\n", 1)[0].strip() == function]
        if not named:
            raise SassError(f"function {function!r} is not in the listing")
        chosen = named[0]
    return [parse_instruction(int(m.group("pc"), 16), m.group("body")) for m in _LINE.finditer(chosen)]


def full_warp_stream(instructions: list[Instruction], arch: str | None = None,
                     compiler: str | None = None) -> InstructionStream:
    """The path a full warp takes (see the module docstring) as an :class:`InstructionStream`."""
    if not instructions:
        raise SassError("the listing has no instructions")
    end = next((i for i, ins in enumerate(instructions) if ins.opcode == "EXIT" and ins.predicate is None),
               len(instructions) - 1)
    path = instructions[: end + 1]
    guard = next((i + 1 for i, ins in enumerate(path)
                  if ins.predicate is not None and ins.opcode in ("EXIT", "BRA")), len(path))
    return InstructionStream(source="sass", instructions=tuple(path), guard_exit_instructions=guard,
                             arch=arch, compiler=compiler)
