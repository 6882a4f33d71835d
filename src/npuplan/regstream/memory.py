"""Replay NPU events over a byte-level model of the regions and check the memory invariants.

Each region is a byte array of what is written, what is written but not read since, and which
write put it there. Checked: every access lies inside its region's tensor; every byte read was
written before (the flash tensor is written from the start); no write overwrites part of an
earlier write none of whose bytes has been read yet when the rest of that write is read later (a
live feature map is not clobbered before its reader; data nothing reads may be overwritten, and an
operation's OFM may overwrite unread data laid out as the same tensor: see ``_signature``); an operation does not touch the destination of a DMA still in
flight (``NPU_OP_DMA_WAIT`` missing) and a DMA does not write what an operation still in flight
reads or writes, or read what it writes (``NPU_OP_KERNEL_WAIT`` missing). As on the hardware,
at most two operations are in flight (a third kick retires the oldest) and one DMA on Ethos-U55,
two on Ethos-U65.
"""

from __future__ import annotations

from dataclasses import field
from functools import cached_property

import numpy as np

from npuplan.errors import ValidationError
from npuplan.records import record
from npuplan.regstream.events import INTERNAL_REGION, DmaEvent, Event, FeatureMapAccess, NpuEvent, Range, WaitEvent
from npuplan.regstream.footprint import Lattice, fm_span, lattices, regular

MAX_KERNELS_IN_FLIGHT = 2
MAX_DMAS_IN_FLIGHT = {0: 1, 1: 2}  # by product: Ethos-U55, Ethos-U65
SETTLED_READS = 8  # reads remembered as settled (``Replay.settled``)


@record(eq=False, frozen=False, slots=False)
class Region:
    """One region's bytes: size, written, written-but-not-yet-read, and the write that wrote each,
    counted from 1 (0: none, or written from the start). ``pristine``: written from the start and
    by nothing since (the flash tensor), so every byte is written and none unread: the arrays are
    built on the first write only."""

    name: str
    size: int
    written: np.ndarray
    unread: np.ndarray
    writer: np.ndarray
    pristine: bool = False

    @classmethod
    def empty(cls, name: str, size: int, *, written: bool = False) -> Region:
        # zeroed arrays come from calloc: a large region's untouched pages cost nothing
        if written:
            return cls(name, size, np.zeros(0, dtype=bool), np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int32),
                       pristine=True)
        return cls(name, size, np.zeros(size, dtype=bool), np.zeros(size, dtype=bool), np.zeros(size, dtype=np.int32))

    def materialise(self) -> None:
        """Build a pristine region's arrays (before its first write)."""
        if self.pristine:
            self.written = np.ones(self.size, dtype=bool)
            self.unread = np.zeros(self.size, dtype=bool)
            self.writer = np.zeros(self.size, dtype=np.int32)
            self.pristine = False


@record(slots=False)
class Access:
    """Bytes one operand touches: region, ``[lo, hi)`` span, and a label; which bytes of the span:
    ``runs`` (strided views, see ``footprint.lattices``) when given, else ``covered`` (a mask over
    the span; None: every byte of it)."""

    region: int
    lo: int
    hi: int
    covered: np.ndarray | None
    label: str
    runs: tuple[Lattice, ...] = ()

    @cached_property
    def mask(self) -> np.ndarray | None:
        """The bytes as a mask over the span (None: every byte), built from ``runs`` on first use."""
        if not self.runs:
            return self.covered
        out = np.zeros(self.hi - self.lo, dtype=bool)
        for run in self.runs:
            run.view(out, self.lo)[...] = True
        return out

    def overlaps(self, other: Access) -> bool:
        lo, hi = max(self.lo, other.lo), min(self.hi, other.hi)
        if self.region != other.region or hi <= lo:
            return False
        mine, theirs = self.mask, other.mask
        if mine is None or theirs is None:
            start = self.lo if mine is not None else other.lo
            mine = mine if mine is not None else theirs
            return mine is None or bool(np.any(mine[lo - start:hi - start]))
        return bool(np.any(mine[lo - self.lo:hi - self.lo] & theirs[lo - other.lo:hi - other.lo]))


def range_access(r: Range, label: str) -> Access:
    return Access(r.region, r.address, r.address + r.length, None, label)


def _writers(writer: np.ndarray) -> list[int]:
    """The distinct writes (from 1; 0 is none) among a span's bytes, ascending. The bytes hold long
    runs of one write each: the first byte of every run is enough."""
    if writer.size == 0:
        return []
    if writer.size >= 1024:  # a large span written by one write (the usual case): two reductions, no copies
        least, most = int(writer.min()), int(writer.max())
        if least == most:
            return [least] if least > 0 else []
    later = writer[1:]
    heads = later[later != writer[:-1]].tolist()
    return sorted({int(writer[0]), *heads} - {0})


@record(eq=False, frozen=False, slots=False)
class Replay:
    """The memory model of one file's regions while its streams run."""

    regions: dict[int, Region]
    where: str = ""
    product: int = 0
    kernels: list[tuple[str, list[Access], list[Access]]] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)  # label of each write so far
    owners: list[object] = field(default_factory=list)  # the operation signature of each write (None: other)
    read_any: list[bool] = field(default_factory=list)  # whether any byte of each write was read
    clobbered: dict[int, str] = field(default_factory=dict)  # write -> what overwrote part of it unread
    dmas: list[tuple[str, Access, Access]] = field(default_factory=list)
    # The last reads that found every byte written and left none unread, until a write touches their
    # span: read again (each weight slice's stripe reads the whole IFM), they would find the same.
    settled: dict[tuple[int, int, int, tuple[Lattice, ...]], Region] = field(default_factory=dict)
    # Bytes that keep their value between invocations (variable tensors): name -> (region, lo, hi).
    # Only a write inside one of them, by an operator allowed to (``writable``), may touch them.
    reserved: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    writable: frozenset[str] = frozenset()

    def fail(self, message: str) -> None:
        raise ValidationError(f"{self.where}: {message}")

    def bounds(self, a: Access) -> Region:
        return self._region(a.region, a.lo, a.hi, a.label)

    def _region(self, number: int, lo: int, hi: int, label: str) -> Region:
        """Region ``number``, failing unless the operator provides it and ``[lo, hi)`` lies inside."""
        region = self.regions.get(number)
        if region is None:
            self.fail(f"{label} uses region {number}, which the operator does not provide")
        assert region is not None
        if lo < 0 or hi > region.size:
            self.fail(f"{label} touches bytes {lo}..{hi} of {region.name} ({region.size} bytes)")
        return region

    def read(self, a: Access) -> None:
        region = self.bounds(a)
        if region.pristine or a.covered is not None:
            if not region.pristine:
                self._read_span(region, a)
            return
        key = (id(region), a.lo, a.hi, a.runs)
        if key in self.settled:  # bytes are never unwritten, and only a write makes them unread
            return
        if a.runs:
            self._read_runs(region, a)
        else:
            self._read_span(region, a)
        self.settled[key] = region
        if len(self.settled) > SETTLED_READS:
            del self.settled[next(iter(self.settled))]

    def _read_span(self, region: Region, a: Access) -> None:
        """``read`` of every byte of the span, or of those ``a.covered`` marks."""
        part = region.written[a.lo:a.hi]
        if not (part.all() if a.covered is None else (part | ~a.covered).all()):
            self._unwritten(region, a)
        # Only the writes none of whose bytes was read yet need a look (marked read, or found
        # clobbered), and all their bytes are still unread: the writers of the covered unread bytes.
        unread = region.unread[a.lo:a.hi]
        fresh = unread if a.covered is None else unread & a.covered
        if not fresh.any():
            return
        writer = region.writer[a.lo:a.hi]
        writers = _writers(writer if a.covered is None and fresh.all() else writer[fresh])
        unread[fresh if a.covered is not None else slice(None)] = False
        self._first_reads(region, a, writers)

    def _read_runs(self, region: Region, a: Access) -> None:
        """``read`` of strided runs: the same checks through views of the runs' bytes only."""
        if not all(run.view(region.written).all() for run in a.runs):
            self._unwritten(region, a)
        fresh = [run.view(region.unread) for run in a.runs]
        found = [run.view(region.writer)[unread] for run, unread in zip(a.runs, fresh) if unread.any()]
        if not found:
            return
        for unread in fresh:
            unread[...] = False
        self._first_reads(region, a, _writers(np.concatenate(found) if len(found) > 1 else found[0]))

    def _unwritten(self, region: Region, a: Access) -> None:
        """Fail on the first byte ``a`` reads that nothing wrote."""
        part, covered = region.written[a.lo:a.hi], a.mask
        missing = ~part if covered is None else covered & ~part
        self.fail(f"{a.label} reads byte {a.lo + int(np.argmax(missing))} of {region.name} before anything wrote it")

    def _first_reads(self, region: Region, a: Access, writers: list[int]) -> None:
        """Mark ``writers`` (writes none of whose bytes was read before ``a``) read, failing on one
        that was overwritten in part meanwhile."""
        for w in writers:
            if w - 1 in self.clobbered:
                self.fail(f"{self.clobbered[w - 1]} overwrote part of what {self.writes[w - 1]} wrote to "
                          f"{region.name} before any of it was read, and {a.label} reads the rest")
            self.read_any[w - 1] = True

    def write(self, a: Access, owner: object = None) -> None:
        region = self.bounds(a)
        if self.reserved:
            self._guard(a)
        region.materialise()
        for key in [k for k in self.settled if k[0] == id(region) and k[1] < a.hi and a.lo < k[2]]:
            del self.settled[key]
        if a.runs:
            unread = [run.view(region.unread) for run in a.runs]
            found = [run.view(region.writer)[u] for run, u in zip(a.runs, unread) if u.any()]
            if found:
                self._clobbers(np.concatenate(found) if len(found) > 1 else found[0], a, owner)
            for run, u in zip(a.runs, unread):
                run.view(region.written)[...] = True
                u[...] = True
                run.view(region.writer)[...] = len(self.writes) + 1
        else:
            unread_span = region.unread[a.lo:a.hi]
            clobbered = unread_span if a.covered is None else a.covered & unread_span
            if clobbered.any():
                self._clobbers(region.writer[a.lo:a.hi][clobbered], a, owner)
            if a.covered is None:
                region.written[a.lo:a.hi] = True
                region.unread[a.lo:a.hi] = True
                region.writer[a.lo:a.hi] = len(self.writes) + 1
            else:
                region.written[a.lo:a.hi] |= a.covered
                region.unread[a.lo:a.hi] |= a.covered
                region.writer[a.lo:a.hi][a.covered] = len(self.writes) + 1
        self.writes.append(a.label)
        self.owners.append(owner)
        self.read_any.append(False)

    def _guard(self, a: Access) -> None:
        """Fail on a write that touches reserved bytes it may not: another tensor's data over a
        variable tensor (which the next invocation would read back), or one that spills past it."""
        for name, (number, lo, hi) in self.reserved.items():
            if not a.overlaps(Access(number, lo, hi, None, name)):
                continue
            if name not in self.writable or a.lo < lo or a.hi > hi:
                self.fail(f"{a.label} writes bytes {max(a.lo, lo)}..{min(a.hi, hi)} of variable tensor {name}, "
                          "whose value must persist between invocations")

    def _clobbers(self, writer: np.ndarray, a: Access, owner: object) -> None:
        """Note the writes of the unread bytes ``a`` overwrites (``writer``: their writers) that
        none of was read: an error if what is left of one is read later."""
        for w in _writers(writer):
            if not self.read_any[w - 1] and (owner is None or self.owners[w - 1] != owner):
                self.clobbered.setdefault(w - 1, a.label)

    def fm(self, fm: FeatureMapAccess, label: str) -> Access:
        """``fm``'s access, its span checked against its region first: a corrupt stride or base
        fails here in one line before any run is listed or mask built over it."""
        lo, hi = fm_span(fm)
        self._region(fm.region, lo, hi, label)
        found = regular(fm)
        if found is not None and found[2] is None:  # every byte of the span
            return Access(fm.region, lo, hi, None, label)
        return Access(fm.region, lo, hi, None, label, lattices(fm))

    def npu(self, e: NpuEvent) -> None:
        label = f"NPU op {e.index} ({e.kind})"
        reads = [self.fm(e.ifm, f"{label} IFM")]
        if e.ifm2 is not None:
            reads.append(self.fm(e.ifm2, f"{label} IFM2"))
        for r, name in ((e.weights, "weights"), (e.scales, "scales"), (e.weights1, "core 1 weights"),
                        (e.scales1, "core 1 scales")):
            if r is not None and r.length:
                reads.append(range_access(r, f"{label} {name}"))
        writes = [self.fm(e.ofm, f"{label} OFM")]
        for dma_label, src, dst in self.dmas:
            for a in reads + writes:
                if a.overlaps(dst):
                    self.fail(f"{a.label} touches the destination of {dma_label} before NPU_OP_DMA_WAIT")
            for a in writes:
                if a.overlaps(src):
                    self.fail(f"{a.label} writes the source of {dma_label} before NPU_OP_DMA_WAIT")
        for a in reads:
            self.read(a)
        for a in writes:
            self.write(a, _signature(e))
        self.kernels.append((label, reads, writes))
        del self.kernels[:-MAX_KERNELS_IN_FLIGHT]

    def dma(self, e: DmaEvent) -> None:
        label = f"DMA {e.index}"
        src, dst = range_access(e.src, f"{label} source"), range_access(e.dst, f"{label} destination")
        if e.dst.region == INTERNAL_REGION:  # a lookup table into the shared buffer: only its source is checked
            self.read(src)
            self.dmas.append((label, src, Access(INTERNAL_REGION, 0, 0, None, dst.label)))
            return
        for op_label, reads, writes in self.kernels:
            if any(dst.overlaps(a) for a in reads + writes) or any(src.overlaps(a) for a in writes):
                self.fail(f"{label} overlaps what {op_label} still uses (no NPU_OP_KERNEL_WAIT before it)")
        # A DMA copies bytes as they are: what was never written stays unwritten at the destination
        # (padding copied with a whole buffer), and is caught only if a kernel reads it.
        source = self.bounds(src)
        copied, copies = None, src.hi > src.lo  # a constant source (pristine): every byte written
        if not source.pristine:
            written = source.written[src.lo:src.hi]
            copied, copies = (None if written.all() else written.copy()), bool(written.any())
        self.read(Access(src.region, src.lo, src.hi, copied, src.label))
        if copies:
            self.write(Access(dst.region, dst.lo, dst.hi, copied, dst.label))
        self.bounds(dst)
        self.dmas.append((label, src, dst))
        del self.dmas[:-MAX_DMAS_IN_FLIGHT.get(self.product, 1)]

    def wait(self, e: WaitEvent) -> None:
        if e.kind == "dma":
            del self.dmas[:max(0, len(self.dmas) - e.outstanding)]
        else:
            del self.kernels[:max(0, len(self.kernels) - e.outstanding)]

    def run(self, stream: list[Event]) -> None:
        """Replay one command stream; at its end every operation and DMA has finished."""
        for e in stream:
            if isinstance(e, NpuEvent):
                self.npu(e)
            elif isinstance(e, DmaEvent):
                self.dma(e)
            else:
                self.wait(e)
        self.kernels.clear()
        self.dmas.clear()

    def touch(self, region: int, offset: int, size: int, *, write: bool, label: str) -> None:
        """A whole tensor read or written outside the NPU (by the CPU or the caller)."""
        a = Access(region, offset, offset + size, None, label)
        if write:
            self.write(a)
        else:
            self.read(a)


def _signature(e: NpuEvent) -> tuple[object, ...]:
    """The OFM's layout (region, strides, format, element size): writes laid out alike are taken to
    write one tensor, which may overwrite what it wrote before anything read it (a stride-2 consumer
    skipping every other row of a one-row rolling buffer; a padded tensor filled, then its interior
    copied in, as Vela writes PAD). Writes laid out otherwise over unread data are clobbering."""
    o = e.ofm
    return (o.region, o.stride_y, o.stride_x, o.stride_c, o.nhcwb16, o.element_bytes)
