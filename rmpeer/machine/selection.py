"""Which of the host's cards a run may touch: --cards, or the job's GPUs from the environment
(CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, SLURM_JOB_GPUS), resolved to RM's cards.

Every way of naming a card has its own order, and none is RM's (docs/cards.md):
  --cards                   rmpeer's card numbers (RM's order, as `rmpeer host` lists them),
                            GPU UUIDs (GPU-..., full or an unambiguous prefix), PCI bus ids
  SLURM_JOB_GPUS            gres.conf's indices: the i-th /dev/nvidiaN its File= lines name
                            (without a readable gres.conf: the minor number N itself)
  CUDA_VISIBLE_DEVICES      UUIDs always; indices only in PCI bus order (CUDA_DEVICE_ORDER=
                            PCI_BUS_ID) or on a one-card host: CUDA's default FASTEST_FIRST
                            order is CUDA's own guess, which rmpeer (no CUDA) cannot repeat
  NVIDIA_VISIBLE_DEVICES    NVML indices (PCI bus order) or UUIDs; all, none, void
So a name is resolved here through the PCI bus id (and the UUID of that bus) RM reports,
never by assuming that two orders agree.

Two steps: `request_from` reads what was asked (before any device is opened: bad syntax is
exit 2 on any machine, and the count of cards fixes the layouts), `resolve` finds the cards
once RM has listed them (NV_ESC_CARD_INFO on nvidiactl, which opens no card). Both are pure
but for reading the environment and gres.conf, which their callers pass in."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from rmpeer.errors import ConfigError, quoted
from rmpeer.model.selection import ALL_CARDS, DEFAULT, OPTION, HostCard, Selection, pci_key, selection_line, spans

CUDA, NVIDIA, SLURM, SLURM_STEP = "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS"
VARIABLES = (CUDA, NVIDIA, SLURM, SLURM_STEP)
CERTIFY_ENV = (CUDA,)                       # what certify itself reads without --cards
GRES_CONF_ENV = "RMPEER_GRES_CONF"          # gres.conf's path (default /etc/slurm/gres.conf)
GRES_CONF = "/etc/slurm/gres.conf"
GRES_LIMIT = 1 << 20                        # bytes: a gres.conf is a few lines

_UUID = re.compile(r"GPU-[0-9a-f-]+", re.I)
_MIG_INDEX = re.compile(r"\d+:\d+", re.ASCII)
# an index of more digits than these is no card: it is refused as text, never converted
# (Python refuses to convert more than 4300 digits, and a range is expanded name by name)
_INDEX = re.compile(r"\d{1,9}", re.ASCII)
_RANGE = re.compile(r"(\d{1,9})-(\d{1,9})", re.ASCII)
MAX_RANGE = 1024    # cards one range may name: far more than any host has device nodes for


class EmptySelection(ConfigError):
    """The selection names no card (none, void, an empty variable): there is nothing to
    certify, and zero cards are never certified. Exit 2: no verdict of the host."""


@dataclass(frozen=True)
class Request:
    """The cards asked for, before the host is known."""

    source: str                      # --cards, --all-cards, default, or the variable read
    text: str = ""                   # as given
    names: tuple = ()                # the names, split; () with every=True
    every: bool = False              # all the host's cards
    cuda_order: str = ""             # CUDA_DEVICE_ORDER as set (CUDA_VISIBLE_DEVICES only)
    gres_minors: tuple | None = None  # gres.conf: index i -> minor (SLURM_JOB_GPUS only)
    variables: tuple = CERTIFY_ENV   # the variables that were looked at

    @property
    def count(self) -> int | None:
        return None if self.every else len(self.names)

    @property
    def how(self) -> str:
        """How the cards were chosen, in words (the certificate's `selection.how`)."""
        if self.source == DEFAULT:
            return f"every card (no --cards, and none of {', '.join(self.variables)} set)"
        if self.every:
            return f"every card ({self.source}{'=' + self.text if self.text else ''})"
        return f"{self.source}={self.text}" if self.source != OPTION else f"--cards {self.text}"


# -- what was asked ----------------------------------------------------------------------------

def _split(text: str, source: str) -> tuple:
    parts = [p.strip() for p in text.split(",")]
    if any(not p for p in parts):
        raise ConfigError(f"{source} {quoted(text)}: an empty name between commas (give cards such as 0,1 or GPU-...)")
    names = []
    for p in parts:
        m = _RANGE.fullmatch(p)
        if m and int(m[1]) <= int(m[2]):
            names += [str(i) for i in _range(int(m[1]), int(m[2]), f"{source} {quoted(text)}")]
        else:
            names.append(p)
    for p in names:
        if p.upper().startswith("MIG-") or _MIG_INDEX.fullmatch(p):
            raise ConfigError(f"{source}: {quoted(p)} is a MIG instance: rmpeer checks peer access between whole GPUs, "
                              f"and a MIG instance has none (name the GPU-... of its card, or --all-cards)")
        if not (_INDEX.fullmatch(p) or _UUID.fullmatch(p) or pci_key(p) is not None):
            raise ConfigError(f"{source}: {quoted(p)} is not a card: give an index, a GPU UUID (GPU-..., or a prefix "
                              f"of one) or a PCI bus id (0000:1b:00.0)")
    if len(set(n.lower() for n in names)) != len(names):
        raise ConfigError(f"{source} {quoted(text)}: a card is named twice")
    return tuple(names)


def _range(first: int, last: int, where: str) -> range:
    if last - first >= MAX_RANGE:
        raise ConfigError(f"{where}: the range {first}-{last} names {last - first + 1} cards, more than any host "
                          f"has (at most {MAX_RANGE} in one range)")
    return range(first, last + 1)


def gres_minors(text: str, where: str = GRES_CONF) -> tuple | None:
    """gres.conf's GPU index -> minor: the /dev/nvidiaN files of its Name=gpu lines in order
    (File=/dev/nvidia[0-3] expands to 0..3). None when it names no GPU file (AutoDetect).
    A File= list that is not one of minors is a ConfigError naming the line (exit 2): an
    index read past it would name another card."""
    minors = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0]
        fields = dict(re.findall(r"(\w+)=(\S+)", line))
        if fields.get("Name", "").lower() != "gpu" or "File" not in fields:
            continue
        for part in re.findall(r"/dev/nvidia(\[[^\]]*\]|\d+)", fields["File"]):
            pieces = part[1:-1].split(",") if part.startswith("[") else [part]
            for piece in pieces:
                m = _RANGE.fullmatch(piece) or _INDEX.fullmatch(piece)
                first, last = ((int(m[1]), int(m[2])) if m.groups() else (int(m[0]), int(m[0]))) if m else (1, 0)
                if first > last:
                    raise ConfigError(f"{where}, line {number}: File={quoted(fields['File'], 80)}: {quoted(piece)} is "
                                      f"not a device minor or a range of them (such as /dev/nvidia[0-3])")
                minors += list(_range(first, last, f"{where}, line {number}"))
    return tuple(minors) or None


def _read_gres(environ) -> tuple | None:
    """The gres.conf minors, or None when there is no readable gres.conf (index = minor). It
    is opened without blocking (a FIFO there would hang the prolog before any deadline) and
    read only as a regular file of a bounded size."""
    from rmpeer.safewrite import UnsafeTarget, read_found     # not at import: the parser loads this module

    path = environ.get(GRES_CONF_ENV) or GRES_CONF
    try:    # root's configuration: a link there is the administrator's, and followed
        data = read_found(path, limit=GRES_LIMIT, follow=True)
    except OSError:
        return None
    except UnsafeTarget as exc:
        raise ConfigError(f"{GRES_CONF_ENV}: {exc}") from None
    return gres_minors(data.decode("utf-8", "replace"), path)


def request_from(cards: str | None = None, *, all_cards: bool = False, variables=CERTIFY_ENV,
                 environ=None) -> Request:
    """What the run is asked to take: --all-cards, else --cards, else the first of `variables`
    that is set (an empty or none/void one is an EmptySelection), else every card."""
    environ = os.environ if environ is None else environ
    if all_cards and cards is not None:
        raise ConfigError("--cards and --all-cards: give one of them")
    if all_cards:
        return Request(ALL_CARDS, every=True)
    if cards is not None:
        if not cards.strip():
            raise EmptySelection("--cards '' names no card: nothing to certify (no verdict; give cards such as "
                                 "0,1, or leave --cards out for every card)")
        if cards.strip().lower() == "all":
            return Request(OPTION, "all", every=True)
        return Request(OPTION, cards.strip(), _split(cards.strip(), "--cards"))
    for var in variables:
        if var not in environ:
            continue
        text = environ[var].strip()
        lowered = text.lower()
        # -1 hides every card from CUDA; Slurm writes NoDevFiles for a job without GPUs
        if not text or (var == NVIDIA and lowered in ("none", "void")) or (var == CUDA and lowered in ("-1", "nodevfiles")):
            raise EmptySelection(f"{var}={text!r} names no card: nothing to certify, no verdict "
                                 f"(zero cards are never certified; --all-cards ignores the environment)")
        if var in (NVIDIA, CUDA) and lowered == "all":
            return Request(var, text, every=True)
        names = _split(text, var)
        return Request(var, text, names, cuda_order=environ.get("CUDA_DEVICE_ORDER", "").strip() if var == CUDA else "",
                       gres_minors=_read_gres(environ) if var in (SLURM, SLURM_STEP) else None)
    return Request(DEFAULT, every=True, variables=tuple(variables))


# -- which cards those are ---------------------------------------------------------------------

def _present(cards) -> str:
    return "; ".join(c.describe() for c in cards) or "none"


def _by_index(name: str, request: Request, cards) -> HostCard:
    """The card an index names, in the order of the name's source."""
    n, src = int(name), request.source
    if src in (OPTION,):
        order, what = list(cards), "rmpeer's card numbers (RM's order, as `rmpeer host` lists them)"
    elif src in (SLURM, SLURM_STEP):
        gres = request.gres_minors
        if gres is not None:
            if n >= len(gres):
                raise ConfigError(f"{src}={request.text}: gres.conf names {len(gres)} GPU(s), so there is no GPU "
                                  f"index {n}; cards present: {_present(cards)}")
            minor, what = gres[n], f"gres.conf's GPU {n}, /dev/nvidia{gres[n]}"
        else:
            minor, what = n, f"/dev/nvidia{n} (no gres.conf File= list was readable: index = minor)"
        found = [c for c in cards if c.minor == minor]
        if not found:
            raise ConfigError(f"{src}={request.text}: {what} is no card of this host; cards present: "
                              f"{_present(cards)}")
        return found[0]
    elif src == CUDA:
        if request.cuda_order.upper() != "PCI_BUS_ID" and len(cards) > 1:
            raise ConfigError(f"{src}={request.text}: CUDA numbers cards fastest first unless "
                              f"CUDA_DEVICE_ORDER=PCI_BUS_ID, an order rmpeer cannot know without CUDA: set "
                              f"{src} to GPU UUIDs ({', '.join(c.uuid for c in cards)}) or CUDA_DEVICE_ORDER="
                              f"PCI_BUS_ID, or pass --cards")
        order, what = sorted(cards, key=lambda c: pci_key(c.pci) or ()), "CUDA's indices in PCI bus order"
    else:   # NVIDIA_VISIBLE_DEVICES: NVML's indices, which follow the PCI bus order
        order, what = sorted(cards, key=lambda c: pci_key(c.pci) or ()), "NVML's indices (PCI bus order)"
    if n >= len(order):
        raise ConfigError(f"{request.how}: no card {n} in {what}; cards present: {_present(cards)}")
    return order[n]


def _by_uuid(name: str, request: Request, cards) -> HostCard:
    found = [c for c in cards if c.uuid and c.uuid.lower().startswith(name.lower())]
    if len(found) == 1:
        return found[0]
    if found:
        raise ConfigError(f"{request.how}: {name!r} is ambiguous, the start of the UUID of cards "
                          f"{', '.join(c.describe() for c in found)}: give more of it")
    raise ConfigError(f"{request.how}: no card has the UUID {name!r}; cards present: {_present(cards)}")


def _by_pci(name: str, request: Request, cards) -> HostCard:
    key = pci_key(name)
    found = [c for c in cards if pci_key(c.pci) == key]
    if not found:
        raise ConfigError(f"{request.how}: no card at PCI bus id {name!r}; cards present: {_present(cards)}")
    return found[0]


def resolve(request: Request, cards) -> Selection:
    """The host's cards `request` names (ConfigError, exit 2, naming the cards present, for a
    name that matches none, an ambiguous one, or two names of one card)."""
    cards = tuple(sorted(cards, key=lambda c: c.index))
    if not cards:
        raise EmptySelection("RM lists no card on this host: nothing to certify")
    if request.every:
        return Selection(tuple(c.index for c in cards), cards, request.source, request.how)
    chosen: dict = {}
    for name in request.names:
        if _UUID.fullmatch(name):
            card = _by_uuid(name, request, cards)
        elif _INDEX.fullmatch(name):
            card = _by_index(name, request, cards)
        else:
            card = _by_pci(name, request, cards)
        if card.index in chosen:
            raise ConfigError(f"{request.how}: {chosen[card.index]!r} and {name!r} are the same card "
                              f"{card.describe()}")
        chosen[card.index] = name
    return Selection(tuple(sorted(chosen)), cards, request.source, request.how)


def host_cards(infos, proc_gpus) -> list:
    """HostCards from RM's card list (rmpeer.rm.host.card_infos rows with their pci) and the
    kernel module's /proc account of each bus (its UUID and model): nothing is opened."""
    by_bus = {pci_key(g.get("bus", "")): g for g in proc_gpus}
    out = []
    for index, info in enumerate(infos):
        proc = by_bus.get(pci_key(info["pci"]), {})
        out.append(HostCard(index, info["minor"], info["pci"], proc.get("uuid", ""), proc.get("model", "")))
    return out


@dataclass
class Chooser:
    """What Host.discover asks which cards to open: a live run resolves its Request against
    RM's list; a replay takes the recorded selection."""

    request: Request | None = None
    recorded: Selection | None = None
    read_proc: object | None = None     # () -> /proc's GPUs; None: rmpeer.rm.host.read_proc_gpus
    chosen: Selection | None = field(default=None, init=False)

    def __call__(self, cards) -> Selection:
        if self.recorded is not None:
            self.chosen = self.recorded
        else:
            self.chosen = resolve(self.request, cards)
        return self.chosen


def chooser_for(request: Request | None, recorded: dict | None, *, replay: bool):
    """The Chooser of a run: a replay repeats the recorded selection (none recorded: every
    card, as recordings made before selection did); a live run resolves its request."""
    if replay:
        return Chooser(recorded=Selection.from_dict(recorded)) if recorded else None
    return Chooser(request=request or Request(DEFAULT, every=True))


def request_of(cards: str | None, *, all_cards: bool = False, cards_env: str | None = None,
               environ=None) -> Request:
    """The Request of --cards LIST, --all-cards and --cards-env VAR[,VAR] (the variables a
    fleet hook reads, in order; default CUDA_VISIBLE_DEVICES)."""
    env = cards_env
    variables = tuple(v.strip() for v in env.split(",") if v.strip()) if env is not None else CERTIFY_ENV
    if env is not None and not variables:
        # ',,' or ' ' named no variable: never read as "every card"
        raise ConfigError(f"--cards-env {env!r}: names no variable (one or more of {', '.join(VARIABLES)})")
    unknown = [v for v in variables if v not in VARIABLES]
    if unknown:      # repr: a name with a line break is still one line
        raise ConfigError(f"--cards-env {env!r}: {', '.join(map(repr, unknown))} is none of {', '.join(VARIABLES)}")
    return request_from(cards, all_cards=all_cards, variables=variables, environ=environ)


def certify_line(facts) -> str:
    """The line certify says of the cards it took ('' when it took every card unasked)."""
    return selection_line(getattr(facts, "selection", None))


# -- certify --if-stale: does a certificate cover the cards asked for? ---------------------------

def stale_reason(cert_host: dict, request: Request, proc_cards) -> str | None:
    """None when a certificate (its `host` facts) covers the cards `request` names, else why
    not. A certificate of the whole host, or of a superset of the selection, covers it; a
    subset's covers only itself or a subset of it. Names are resolved against the card list
    the certificate's run had from RM, once /proc (`proc_cards`: [{pci, uuid}], read now)
    confirms that list still describes this host; without it nothing is assumed."""
    recorded = cert_host.get("selection")
    if not recorded:
        return None          # made before selection existed: it took every card
    sel = Selection.from_dict(recorded)
    now = {pci_key(c["pci"]): c["uuid"].lower() for c in proc_cards}
    then = {pci_key(c.pci): c.uuid.lower() for c in sel.of}
    if now != then:
        return "the host's cards (PCI bus ids and UUIDs in /proc) are not the certificate's"
    try:
        asked = resolve(request, sel.of)
    except ConfigError as exc:
        return f"the cards asked for are not the certificate's: {exc}"
    missing = [i for i in asked.cards if i not in sel.cards]
    if missing:
        return (f"the certificate covers cards {spans(sel.cards)} ({sel.how}), not card "
                f"{', '.join(f'{i} ({sel.of[i].uuid})' for i in missing)}")
    return None
