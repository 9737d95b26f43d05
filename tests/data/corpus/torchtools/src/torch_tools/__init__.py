"""Init for `torch_tools.`."""
from importlib.metadata import version as _version


from .datasets import DataSet
from .datasets import ShapesDataset
from .models import FCNet
from .models import ConvNet2d
from .models import UNet
from .models import Encoder2d
from .models import Decoder2d
from .models import AutoEncoder2d
from .models import SimpleConvNet2d
from .models import VAE2d

__version__ = _version("torch_tools")
