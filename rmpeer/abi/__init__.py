"""The RM ABI as data: matrices/drivers.yaml loaded, checked and chosen."""

from rmpeer.abi.bitfields import BitField, BitFieldGroup
from rmpeer.abi.drivers import Abi, DriverMatrix, parse_version
from rmpeer.tables.load import MATRICES, load_yaml
from rmpeer.abi.nvstatus import Status, names as status_names, status
from rmpeer.abi.structs import Field, Struct

__all__ = ["Abi", "BitField", "BitFieldGroup", "DriverMatrix", "Field", "MATRICES",
           "Status", "Struct", "load_yaml", "parse_version", "status", "status_names"]
