"""The box decided: who logs in and how (keys, the login user, sshd's port), each container's
published ports, mounts and environment, and the notebook served from it."""
