"""The RM ABI as data (matrices/drivers.yaml): every release resolves, the facts measured on
real hardware hold, each entry states only what changed, and driver selection fails closed."""

import pytest

from rmpeer.abi import DriverMatrix, parse_version
from rmpeer.errors import UnknownDriverError

pytestmark = pytest.mark.offline
MATRIX = DriverMatrix()
BRANCHES = (535, 550, 560, 565, 570, 575, 580, 590, 595)


def abi(version):
    return MATRIX.abi(MATRIX.select(version))


@pytest.mark.parametrize("release", MATRIX.releases)
def test_every_release_resolves_with_fields_inside_their_structs(release):
    a = MATRIX.abi(release)
    for st in a.structs.values():
        fields = sorted(st.fields.values(), key=lambda f: f.offset)
        for f in fields:
            assert f.end <= st.size, f"{st.name}.{f.name} ends past {st.size}"
        for f, g in zip(fields, fields[1:]):
            union = f.name.rsplit(".", 1)[0] == g.name.rsplit(".", 1)[0] and "." in f.name
            assert f.end <= g.offset or union, f"{st.name}: {f.name} overlaps {g.name}"
    for name, ctl in a.controls.items():
        assert ctl["params"] in a.structs, f"{name}: params {ctl['params']} undefined"


@pytest.mark.parametrize("branch", BRANCHES)
def test_every_branch_has_its_first_release(branch):
    assert any(parse_version(v)[0] == branch for v in MATRIX.releases)


def test_each_entry_states_only_what_changed():
    previous = None
    for entry in MATRIX.entries:
        if previous is not None:
            for name, spec in (entry.get("structs") or {}).items():
                before = previous.structs.get(name)
                assert before is None or (before.size, {f: (x.offset, x.type, x.count) for f, x in before.fields.items()}) != (
                    spec["size"], {f: tuple((v + [1])[:3]) for f, v in spec["fields"].items()}), \
                    f"{entry['version']} restates {name} unchanged"
            for section in ("escapes", "classes", "constants"):
                for key, value in (entry.get(section) or {}).items():
                    assert getattr(previous, section).get(key) != value, f"{entry['version']} restates {section}.{key}"
        previous = MATRIX.abi(entry["version"])


@pytest.mark.parametrize("version,size,dma_offset,status", [
    ("535.43.02", 56, 40, 48), ("575.64.05", 56, 40, 48), ("580.65.06", 64, 48, 56),
    ("580.159.04", 64, 48, 56), ("590.44.01", 64, 48, 56), ("595.45.04", 64, 48, 56)])
def test_nvos46_layout_by_driver(version, size, dma_offset, status):
    st = abi(version).struct("NVOS46_PARAMETERS")
    assert (st.size, st.field("dmaOffset").offset, st.field("status").offset) == (size, dma_offset, status)
    assert (st.field("flags2").offset, st.field("kindOverride").offset) == (36, 40) if size == 64 else \
        not st.has("flags2")


def test_nvos46_grew_first_at_580_65_06():
    assert abi("575.64.05").struct("NVOS46_PARAMETERS").size == 56
    first = next(v for v in MATRIX.releases if MATRIX.abi(v).struct("NVOS46_PARAMETERS").size == 64)
    assert first == "580.65.06"


@pytest.mark.parametrize("version,size", [("535.43.02", 72), ("580.159.04", 72), ("590.44.01", 88),
                                          ("595.45.04", 88)])
def test_nv503b_alloc_params_size(version, size):
    st = abi(version).struct("NV503B_ALLOC_PARAMETERS")
    assert st.size == size
    assert (st.field("hSubDevice").offset, st.field("hPeerSubDevice").offset) == (0, 4)


def test_sizes_measured_at_580():
    a = abi("580.159.04")
    sizes = {n: a.struct(n).size for n in ("NVOS21_PARAMETERS", "NVOS64_PARAMETERS", "NVOS54_PARAMETERS",
                                           "NVOS46_PARAMETERS", "NV503B_ALLOC_PARAMETERS", "nv_ioctl_card_info_t",
                                           "nv_ioctl_nvos33_parameters_with_fd", "NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS")}
    assert sizes == {"NVOS21_PARAMETERS": 32, "NVOS64_PARAMETERS": 48, "NVOS54_PARAMETERS": 32,
                     "NVOS46_PARAMETERS": 64, "NV503B_ALLOC_PARAMETERS": 72, "nv_ioctl_card_info_t": 72,
                     "nv_ioctl_nvos33_parameters_with_fd": 56, "NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS": 24}


def test_escapes_and_ioctl_requests():
    a = abi("580.159.04")
    assert {n: a.escape(n) for n in ("NV_ESC_CARD_INFO", "NV_ESC_REGISTER_FD", "NV_ESC_CHECK_VERSION_STR",
                                     "NV_ESC_RM_ALLOC", "NV_ESC_RM_FREE", "NV_ESC_RM_CONTROL",
                                     "NV_ESC_RM_MAP_MEMORY", "NV_ESC_RM_MAP_MEMORY_DMA",
                                     "NV_ESC_RM_UNMAP_MEMORY_DMA")} == {
        "NV_ESC_CARD_INFO": 200, "NV_ESC_REGISTER_FD": 201, "NV_ESC_CHECK_VERSION_STR": 210,
        "NV_ESC_RM_ALLOC": 0x2B, "NV_ESC_RM_FREE": 0x29, "NV_ESC_RM_CONTROL": 0x2A,
        "NV_ESC_RM_MAP_MEMORY": 0x4E, "NV_ESC_RM_MAP_MEMORY_DMA": 0x57, "NV_ESC_RM_UNMAP_MEMORY_DMA": 0x58}
    # _IOWR('F', 0x57, 64): read|write, size 64, type 'F', number 0x57
    assert a.ioctl_request(0x57, 64) == 0xC0404657
    assert abi("575.64.05").ioctl_request(0x57, 56) == 0xC0384657


def test_classes_of_the_peer_setup():
    a = abi("580.159.04")
    assert {n: a.cls(n) for n in ("NV01_ROOT_CLIENT", "NV01_DEVICE_0", "NV20_SUBDEVICE_0", "FERMI_VASPACE_A",
                                  "NV01_MEMORY_LOCAL_USER", "NV01_MEMORY_SYSTEM", "NV01_MEMORY_VIRTUAL",
                                  "NV50_P2P")} == {
        "NV01_ROOT_CLIENT": 0x41, "NV01_DEVICE_0": 0x80, "NV20_SUBDEVICE_0": 0x2080, "FERMI_VASPACE_A": 0x90F1,
        "NV01_MEMORY_LOCAL_USER": 0x40, "NV01_MEMORY_SYSTEM": 0x3E, "NV01_MEMORY_VIRTUAL": 0x70, "NV50_P2P": 0x503B}


@pytest.mark.parametrize("version", ["535.43.02", "580.159.04", "595.45.04"])
def test_nvos46_flags_compose_to_the_measured_words(version):
    flags = abi(version).bits("NVOS46_FLAGS")
    direct = flags.compose(DMA_OFFSET_FIXED="TRUE", PAGE_SIZE="HUGE")
    assert direct == 0x8400
    assert flags.compose(DMA_OFFSET_FIXED="TRUE", PAGE_SIZE="HUGE", P2P_ENABLE="NOSLI") == 0x208400
    assert flags.compose(DMA_OFFSET_FIXED="TRUE", PAGE_SIZE="4KB", CACHE_SNOOP="ENABLE") == 0x8110
    assert flags.value_of(0x208400, "P2P_SUBDEVICE_ID") == 0
    assert "P2P_ENABLE=NOSLI" in flags.describe(0x208400)


def test_a_word_composed_again_is_the_same_and_a_bad_one_is_refused_each_time(monkeypatch):
    """compose keeps the words it made (a copy engine composes the same ones at every copy):
    the words are the measured ones however often and in whatever order they are asked for,
    and what does not fit is refused every time, never kept."""
    from rmpeer.abi import bitfields

    flags = abi("580.159.04").bits("NVOS46_FLAGS")
    asks = [(dict(DMA_OFFSET_FIXED="TRUE", PAGE_SIZE="HUGE", P2P_ENABLE="NOSLI"), 0x208400),
            (dict(DMA_OFFSET_FIXED="TRUE", PAGE_SIZE="HUGE"), 0x8400),
            (dict(DMA_OFFSET_FIXED="TRUE", PAGE_SIZE="4KB", CACHE_SNOOP="ENABLE"), 0x8110)]
    for _ in range(3):
        assert [flags.compose(**fields) for fields, _word in asks] == [word for _fields, word in asks]
    for _ in range(2):
        with pytest.raises(KeyError, match="no field 'NOT_A_FIELD'"):
            flags.compose(NOT_A_FIELD=1)
        with pytest.raises(ValueError, match="does not fit"):
            flags.compose(P2P_SUBDEVICE_ID=1 << 20)
    monkeypatch.setattr(bitfields, "COMPOSED_KEPT", 0)          # none kept: the same words
    assert bitfields.BitFieldGroup(flags.name, flags.fields).compose(**asks[0][0]) == asks[0][1]


def test_selection_takes_the_newest_release_of_the_branch_at_or_below():
    newest_580 = max((v for v in MATRIX.releases if v.startswith("580.")), key=parse_version)
    assert MATRIX.select("580.159.04") == newest_580
    assert MATRIX.select("580.65.06") == "580.65.06"
    assert MATRIX.select("575.64.05") != "580.65.06"


@pytest.mark.parametrize("version", ["600.10.01", "530.41.03", "580.1.1"])
def test_an_unknown_driver_fails_closed_with_a_way_forward(version):
    with pytest.raises(UnknownDriverError) as err:
        MATRIX.select(version)
    text = str(err.value)
    assert version in text and "--rm-abi" in text and "drivers.yaml" in text
    assert "rmpeer abi from-headers" in text


def test_a_forced_abi_says_so():
    a = MATRIX.abi_for_driver("600.10.01", forced_release="580.65.06")
    assert a.forced and a.release == "580.65.06" and a.driver == "600.10.01"
    assert "--rm-abi" in a.note
