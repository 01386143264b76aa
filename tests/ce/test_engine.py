"""The copy-engine facts as data (matrices/engines.yaml, channel.yaml) compose to the words
measured on real H200s (docs/copy-engine.md), and other GPU generations are refused by name."""

import pytest

from rmpeer.abi import DriverMatrix
from rmpeer.ce.classes import load_engines, pick_generation
from rmpeer.errors import ConfigError
from rmpeer.traffic.peer import channel_layout

ABI = DriverMatrix().abi_for_driver("580.159.04")
pytestmark = pytest.mark.offline
HOPPER = load_engines()["hopper"]
LAYOUT = channel_layout()


def test_launch_dma_words():
    launch = HOPPER.copy.bits("LAUNCH_DMA")
    assert launch.compose(**LAYOUT["launch_copy"]) == 0x04000182
    assert launch.compose(**LAYOUT["launch_release"]) == 0x14
    assert launch.compose(FLUSH_ENABLE="TRUE", SEMAPHORE_TYPE="RELEASE_ONE_WORD_SEMAPHORE") == 0x0C


def test_method_header_and_gpfifo_entry():
    dma = HOPPER.gpfifo.bits("DMA")
    header = dma.compose(SEC_OP="INC_METHOD", METHOD_COUNT=3, METHOD_SUBCHANNEL=4, METHOD_ADDRESS=0x240 >> 2)
    assert header == 0x20000000 | 3 << 16 | 4 << 13 | 0x240 >> 2
    va, dwords = 0x12_3456_7890, 25
    entry0 = HOPPER.gpfifo.bits("GP_ENTRY0").compose(GET=(va & 0xFFFFFFFF) >> 2)
    entry1 = HOPPER.gpfifo.bits("GP_ENTRY1").compose(GET_HI=va >> 32, LENGTH=dwords)
    assert entry0 == va & 0xFFFFFFFC and entry1 == (va >> 32) | dwords << 10


def test_methods_userd_and_doorbell_offsets():
    m = HOPPER.copy.methods
    assert (m["SET_SEMAPHORE_A"], m["LAUNCH_DMA"], m["OFFSET_IN_UPPER"], m["LINE_LENGTH_IN"]) == (0x240, 0x300, 0x400, 0x418)
    assert (HOPPER.gpfifo.userd["GPPut"], HOPPER.gpfifo.userd["GPGet"]) == (0x8C, 0x88)
    assert HOPPER.usermode.registers["NOTIFY_CHANNEL_PENDING"] == 0x90
    bound = pick_generation([0xC86F, 0xC8B5, 0xC661], ABI)
    assert (bound.gpfifo.number, bound.copy.number, bound.usermode.number) == (0xC86F, 0xC8B5, 0xC661)   # cl*.h


def test_the_channel_layout_fits_its_control_block():
    ring_end = LAYOUT["ring_offset"] + LAYOUT["ring_entries"] * HOPPER.gpfifo.constants["GP_ENTRY__SIZE"]
    assert ring_end <= LAYOUT["userd_offset"] < LAYOUT["pushbuffer_offset"] < LAYOUT["control_block_size"]


def test_a_hopper_class_list_is_accepted():
    assert pick_generation([0xC86F, 0xC8B5, 0xC661, 0x2080], ABI).name == "hopper"


def test_another_generation_is_refused_naming_what_is_missing():
    ampere = [0xC56F, 0xC6B5, 0xC561]
    with pytest.raises(ConfigError) as err:
        pick_generation(ampere, ABI)
    text = str(err.value)
    assert "HOPPER_DMA_COPY_A (0xc8b5) MISSING" in text and "refused rather than guessed" in text


def test_the_start_gate_words():
    """The host methods that arm a channel behind a semaphore (copies at once start together):
    clc86f.h puts SEM_ADDR_LO..SEM_EXECUTE at 0x5c..0x6c, OPERATION_ACQ_CIRC_GEQ = 3 in bits
    2:0, ACQUIRE_SWITCH_TSG_EN at bit 12, PAYLOAD_SIZE_32BIT = 0 at bit 24."""
    m, bits = HOPPER.gpfifo.methods, HOPPER.gpfifo.bits
    assert [m[k] for k in ("SEM_ADDR_LO", "SEM_ADDR_HI", "SEM_PAYLOAD_LO", "SEM_PAYLOAD_HI", "SEM_EXECUTE")] == \
        [0x5C, 0x60, 0x64, 0x68, 0x6C]
    assert bits("SEM_EXECUTE").compose(OPERATION="ACQ_CIRC_GEQ", ACQUIRE_SWITCH_TSG="EN", PAYLOAD_SIZE="32BIT") == 3 | 1 << 12
    va = 0x7F_1234_5670
    assert bits("SEM_ADDR_LO").compose(OFFSET=(va & 0xFFFFFFFF) >> 2) == va & 0xFFFFFFFC
    assert bits("SEM_ADDR_HI").compose(OFFSET=va >> 32) == 0x7F


def test_a_gated_copy_waits_on_its_gate_before_its_first_release():
    """start_copy(gate=...) puts the acquire first: the copy's start timestamp is taken only
    once the host opens the gate."""
    from rmpeer.ce.engine import CopyEngine

    class Sem:
        gpu_va = 0x10_0000_0000

    engine = CopyEngine.__new__(CopyEngine)
    engine.gen, engine.channel, engine.sem = pick_generation([0xC86F, 0xC8B5, 0xC661], ABI), LAYOUT, Sem()
    engine.object_bound, engine.payload = True, 0
    sent = []
    engine.submit = sent.append
    engine.start_copy(0x1000, 0x2000, 4096, slots=(2, 1), gate=(3, 7))
    words = sent[0]
    header = HOPPER.gpfifo.bits("DMA").compose(SEC_OP="INC_METHOD", METHOD_COUNT=5,
                                                METHOD_SUBCHANNEL=LAYOUT["copy_subchannel"], METHOD_ADDRESS=0x5C >> 2)
    gate_va = Sem.gpu_va + 3 * LAYOUT["semaphore_slot_size"]
    assert words[:6] == [header, gate_va & 0xFFFFFFFF, gate_va >> 32, 7, 0, 3 | 1 << 12]
    engine.start_copy(0x1000, 0x2000, 4096)
    assert sent[1][0] != header   # ungated: the release comes first
