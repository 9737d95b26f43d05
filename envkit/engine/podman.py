"""Containers on Podman, created through its own API (libpod) on the same socket: its
Docker-compatible create call cannot name CDI devices (Podman 4.3 reads `nvidia.com/gpu=all` in
Devices as a path, and drops DeviceRequests without a word, so a container would start without
its GPUs). The options are the ones envkit gives Docker (sdk_up.run_options), translated."""

from __future__ import annotations

from typing import Any

LIBPOD_API = "v4.0.0"


def _portmappings(ports: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "host_ip": address,
            "host_port": int(host_port),
            "container_port": int(key.partition("/")[0]),
            "protocol": key.partition("/")[2] or "tcp",
        }
        for key, bindings in ports.items()
        for address, host_port in (bindings if isinstance(bindings, list) else [bindings])
    ]


def _storage(volumes: dict[str, dict[str, str]]) -> dict[str, list[dict[str, Any]]]:
    named, binds = [], []
    for source, target in volumes.items():
        mode = target.get("mode", "rw")
        if source.startswith("/"):
            binds.append(
                {
                    "Type": "bind",
                    "Source": source,
                    "Destination": target["bind"],
                    "Options": ["rbind", mode],
                }
            )
        else:
            named.append({"Name": source, "Dest": target["bind"], "Options": [mode]})
    return {"volumes": named, "mounts": binds}


def libpod_spec(image: str, options: dict[str, Any], cdi_devices: list[str]) -> dict[str, Any]:
    """Podman's SpecGenerator for the docker-py OPTIONS envkit builds, with CDI_DEVICES."""
    from docker.utils import parse_bytes

    spec: dict[str, Any] = {
        "image": image,
        "name": options["name"],
        "hostname": options.get("hostname", options["name"]),
        "env": options.get("environment") or {},
        "labels": options.get("labels") or {},
        "init": bool(options.get("init")),
        "portmappings": _portmappings(options.get("ports") or {}),
        **_storage(options.get("volumes") or {}),
    }
    if cdi_devices:
        spec["devices"] = [{"path": name} for name in cdi_devices]
    if options.get("ipc_mode") == "host":
        spec["ipcns"] = {"nsmode": "host"}
    elif options.get("shm_size"):
        spec["shm_size"] = int(parse_bytes(options["shm_size"]))
    if health := options.get("healthcheck"):
        spec["healthconfig"] = {
            "Test": health["test"],
            "Interval": health["interval"],
            "Timeout": health["timeout"],
            "Retries": health["retries"],
            "StartPeriod": health["start_period"],
        }
    limits: dict[str, Any] = {}
    if options.get("nano_cpus"):
        limits["cpu"] = {"quota": int(options["nano_cpus"] // 10_000), "period": 100_000}
    if options.get("mem_limit"):
        limits["memory"] = {"limit": int(parse_bytes(options["mem_limit"]))}
    if limits:
        spec["resource_limits"] = limits
    if policy := (options.get("restart_policy") or {}).get("Name"):
        spec["restart_policy"] = policy
    if options.get("ulimits"):
        spec["r_limits"] = [
            {"type": u["Name"], "soft": u["Soft"], "hard": u["Hard"]} for u in options["ulimits"]
        ]
    return spec


def create(client: Any, image: str, options: dict[str, Any], cdi_devices: list[str]) -> Any:
    """Create the container through libpod; the docker SDK's object for it."""
    from docker.errors import APIError

    url = f"{client.api.base_url}/{LIBPOD_API}/libpod/containers/create"
    response = client.api._post_json(url, data=libpod_spec(image, options, cdi_devices))
    if response.status_code >= 400:
        try:
            said = response.json().get("message") or response.text
        except ValueError:
            said = response.text
        raise APIError(f"{response.status_code} {said}", response=response, explanation=said)
    return client.containers.get(response.json()["Id"])
