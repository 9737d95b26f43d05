py=$(command -v python3 || command -v python) \
  || { echo "envkit: the image has no python" >&2; exit 2; }
while true; do
  "$py" /opt/envkit-checks/%(bundle)s health --npd --config "$1" > %(verdict)s.msg
  rc=$?
  { echo "$rc"; cat %(verdict)s.msg; } > %(verdict)s.tmp && mv %(verdict)s.tmp %(verdict)s
  sleep %(interval)d
done
