"""Init for `torch_tools.models`."""
from torch_tools.models._fc_net import FCNet
from torch_tools.models._conv_net_2d import ConvNet2d
from torch_tools.models._unet import UNet
from torch_tools.models._encoder_2d import Encoder2d
from torch_tools.models._decoder_2d import Decoder2d
from torch_tools.models._autoencoder_2d import AutoEncoder2d
from torch_tools.models._simple_conv_2d import SimpleConvNet2d
from torch_tools.models._variational_autoencoder_2d import VAE2d
