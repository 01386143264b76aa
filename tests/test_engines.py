"""The copy-engine facts as data (matrices/engines.yaml, channel.yaml) compose to the words
measured on real H200s (docs/copy-engine.md), and other GPU generations are refused by name."""

import pytest

from rmpeer.abi import DriverMatrix
from rmpeer.ce.classes import load_engines, pick_generation
from rmpeer.errors import ConfigError
from rmpeer.traffic import channel_layout

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
