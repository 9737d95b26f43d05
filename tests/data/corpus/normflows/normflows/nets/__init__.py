from . import (
    cnn,
    lipschitz,
    made,
    mlp,
    resnet,
)

from .mlp import MLP

from .cnn import ConvNet2d

from .resnet import ResidualNet, ConvResidualNet

from .lipschitz import LipschitzMLP, LipschitzCNN, InducedNormLinear, InducedNormConv2d

from .made import MADE
