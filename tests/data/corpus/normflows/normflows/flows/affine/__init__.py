from . import (
    autoregressive,
    coupling,
    glow,
)

from .coupling import (
    AffineConstFlow,
    CCAffineConst,
    AffineCoupling,
    MaskedAffineFlow,
    AffineCouplingBlock,
)

from .glow import GlowBlock

from .autoregressive import MaskedAffineAutoregressive
