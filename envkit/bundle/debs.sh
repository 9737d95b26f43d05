#!/bin/sh
# Run as root in the image: its own apt (sources, mirror) fetches each pinned .deb, then a
# Packages index is written beside them, so that `deb [trusted=yes] file:DIR ./` serves them.
set -eu
apt-get update -qq
mkdir /tmp/debs && cd /tmp/debs
apt-get download -q -- "$@"
for deb in *.deb; do
  dpkg-deb -f "$deb"
  printf 'Filename: ./%s\nSize: %s\nSHA256: %s\n\n' "$deb" "$(stat -c %s "$deb")" \
    "$(sha256sum "$deb" | cut -d' ' -f1)"
done > Packages
cp -- * /envkit-out/
# Owned as the folder is (the user's where the engine runs as root; root where it is rootless,
# which maps back to the user): never files the user cannot delete.
chown "$(stat -c %u:%g /envkit-out)" /envkit-out/*
