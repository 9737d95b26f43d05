"""The image decided: where torch, CUDA and Python come from, the mirrors, the CA certificates, how
packages are installed, and the Dockerfile's typed layers in order."""
