"""The RM ABI as data: matrices/drivers.yaml loaded, checked and chosen."""

from .bitfields import BitField, BitFieldGroup
from .drivers import Abi, DriverMatrix, parse_version
from .matrix import MATRICES, load_yaml
from .status import Status, code_of, status
from .structs import Field, Struct

__all__ = ["Abi", "BitField", "BitFieldGroup", "DriverMatrix", "Field", "MATRICES",
           "Status", "Struct", "code_of", "load_yaml", "parse_version", "status"]
