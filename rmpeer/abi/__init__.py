"""The RM ABI as data: matrices/drivers.yaml loaded, checked and chosen."""

from .bitfields import BitField, BitFieldGroup
from .drivers import Abi, DriverMatrix, parse_version
from .matrix import MATRICES, load_yaml
from .nvstatus import Status, names as status_names, status
from .structs import Field, Struct

__all__ = ["Abi", "BitField", "BitFieldGroup", "DriverMatrix", "Field", "MATRICES",
           "Status", "Struct", "load_yaml", "parse_version", "status", "status_names"]
