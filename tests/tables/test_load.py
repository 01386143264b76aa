"""rmpeer.tables.load: a matrix file that YAML itself cannot turn into values is one MatrixError."""

import pytest

from rmpeer.errors import MatrixError
from rmpeer.tables.load import load_yaml

pytestmark = pytest.mark.offline


def test_an_integer_past_pythons_digit_limit_is_a_matrix_error_naming_the_file(tmp_path):
    """Python refuses to convert an integer of more than 4300 digits (a ValueError out of
    YAML's int constructor): the user reads which file, in one short line."""
    path = tmp_path / "layouts.yaml"
    path.write_text("va:\n  page_size: " + "9" * 5000 + "\n")
    with pytest.raises(MatrixError) as err:
        load_yaml(path)
    text = str(err.value)
    assert str(path) in text and "cannot be read as YAML" in text
    assert "\n" not in text and "9" * 61 not in text and len(text) < len(str(path)) + 200
