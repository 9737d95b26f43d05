"""Init for `torch_tools.datasets`."""
from torch_tools.datasets._dataset import DataSet
from torch_tools.datasets._shapes_dataset import ShapesDataset
