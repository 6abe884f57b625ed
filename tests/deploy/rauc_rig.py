"""RAUC's service on a private bus with a stand-in for GRUB, for tests (docs/update.md).

``rauc service`` needs the system bus: here a private ``dbus-daemon`` (its own configuration, a
socket in the test's directory) with ``DBUS_SYSTEM_BUS_ADDRESS`` pointing at it. The bootloader is
RAUC's ``custom`` backend: a shell script that keeps GRUB's variables (``ORDER``, ``<slot>_OK``,
``<slot>_TRY``) in a file and logs every call, so a test sees what RAUC told the bootloader. The
slots are files. :meth:`RaucRig.boot` does what GRUB's script does at power-on (the first slot in
``ORDER`` with ``OK=1, TRY=0`` is booted and its ``TRY`` set; one found with ``TRY=1`` failed its
trial and loses ``OK``) and (re)starts the service told that slot was booted
(``--override-boot-slot``: nothing in a container's /proc/cmdline names it).
"""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

BUS_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/>
  </policy>
  {include}
</busconfig>
"""

# RAUC's custom bootloader interface (get-primary, set-primary, get-state, set-state) over GRUB's
# variables, as RAUC's grub backend sets them: set-primary puts the slot first in ORDER with
# OK=1 TRY=0; good is OK=1 TRY=0 and listed in ORDER; bad is OK=0.
BOOTLOADER = """#!/bin/sh
env={env}
echo "$*" >> {log}
get() {{ sed -n "s/^$1=//p" "$env"; }}
put() {{ grep -v "^$1=" "$env" > "$env.tmp"; echo "$1=$2" >> "$env.tmp"; mv "$env.tmp" "$env"; }}
case "$1" in
  get-primary) for s in $(get ORDER); do [ "$(get ${{s}}_OK)" = 1 ] && echo "$s" && exit 0; done; exit 1 ;;
  set-primary) order="$2"; for s in $(get ORDER); do [ "$s" = "$2" ] || order="$order $s"; done
               put ORDER "$order"; put "$2_OK" 1; put "$2_TRY" 0 ;;
  get-state) case " $(get ORDER) " in *" $2 "*) ;; *) echo bad; exit 0 ;; esac
             [ "$(get $2_OK)" = 1 ] && [ "$(get $2_TRY)" = 0 ] && echo good || echo bad ;;
  set-state) if [ "$3" = good ]; then put "$2_OK" 1; else put "$2_OK" 0; fi; put "$2_TRY" 0 ;;
  *) exit 1 ;;
esac
"""


class RaucRig:
    def __init__(self, root: Path, keyring: Path, versions: dict[str, str | None], bus_policy: Path | None = None) -> None:
        self.root = root
        self.socket = Path(tempfile.mkdtemp(prefix="egm-bus-")) / "bus"     # reachable by other users
        self.socket.parent.chmod(0o755)
        self.grubenv = root / "grubenv"
        self.log = root / "bootloader.log"
        self.data = root / "rauc-data"
        self.data.mkdir(parents=True)
        self.env = {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={self.socket}"}
        # bus_policy: a file read after the allow-all default rule (as /etc/dbus-1/system.d is after Debian's)
        include = f"<include>{bus_policy}</include>" if bus_policy else ""
        (root / "bus.conf").write_text(BUS_CONF.format(socket=self.socket, include=include))
        script = root / "bootloader.sh"
        script.write_text(BOOTLOADER.format(env=self.grubenv, log=self.log))
        script.chmod(0o755)
        slots = ""
        for i, name in enumerate(versions):
            (root / f"slot-{name}.img").write_bytes(b"\0" * 4096)
            slots += f"[slot.appfs.{i}]\ndevice={root / f'slot-{name}.img'}\ntype=raw\nbootname={name}\n\n"
        self.conf = root / "system.conf"
        self.conf.write_text(f"[system]\ncompatible=egm-terminal\nbootloader=custom\ndata-directory={self.data}\n\n"
                             f"[handlers]\nbootloader-custom-backend={script}\n\n"
                             f"[keyring]\npath={keyring}\ncheck-purpose=codesign\n\n{slots}")
        good = [n for n, v in versions.items() if v is not None]
        self.grubenv.write_text(f"ORDER={' '.join(good)}\n" + "".join(
            f"{n}_OK={1 if n in good else 0}\n{n}_TRY=0\n" for n in versions))
        for name, version in versions.items():
            if version is not None:
                self.set_version(name, version)
        self.bus = subprocess.Popen(["dbus-daemon", "--nofork", f"--config-file={root / 'bus.conf'}"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.service: subprocess.Popen[bytes] | None = None
        self._wait(lambda: self.socket.exists(), "dbus-daemon's socket")

    def _wait(self, ready, what: str, timeout: float = 10) -> None:
        end = time.monotonic() + timeout
        while not ready():
            if time.monotonic() > end:
                raise TimeoutError(f"{what} did not come up in {timeout} s")
            time.sleep(0.05)

    def grub(self) -> dict[str, str]:
        return dict(line.split("=", 1) for line in self.grubenv.read_text().splitlines() if "=" in line)

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def set_version(self, bootname: str, version: str) -> None:
        """What ``rauc install`` writes into its status file: the bundle's version in the slot."""
        index = list(self.slot_names()).index(bootname)
        status = configparser.ConfigParser(interpolation=None)
        status.optionxform = str  # type: ignore[assignment,method-assign]
        path = self.data / "central.raucs"
        status.read(path)
        group = f"slot.appfs.{index}"
        if not status.has_section(group):
            status.add_section(group)
        status[group].update({"bundle.compatible": "egm-terminal", "bundle.version": version, "status": "ok"})
        with open(path, "w") as f:
            status.write(f, space_around_delimiters=False)

    def slot_names(self) -> list[str]:
        return [line.split("=", 1)[1] for line in self.conf.read_text().splitlines() if line.startswith("bootname=")]

    def boot(self) -> str:
        """Power-on: GRUB's choice, then the service told that slot was booted. Returns it."""
        self.stop_service()
        env = self.grub()
        chosen = None
        for name in env.get("ORDER", "").split():
            if env.get(f"{name}_OK") == "1" and env.get(f"{name}_TRY") == "0":
                env[f"{name}_TRY"] = "1"
                chosen = name
                break
            if env.get(f"{name}_OK") == "1" and env.get(f"{name}_TRY") == "1":
                env[f"{name}_OK"] = "0"           # its trial never said good: it failed
        if chosen is None:
            raise RuntimeError(f"no slot to boot: {env}")
        self.grubenv.write_text("".join(f"{k}={v}\n" for k, v in env.items()))
        self.start(chosen)
        return chosen

    def start(self, booted: str) -> None:
        """The service (again) on the running system that booted ``booted``."""
        self.stop_service()
        with open(self.root / "service.log", "ab") as log:
            self.service = subprocess.Popen(["rauc", "-c", str(self.conf), f"--override-boot-slot={booted}", "service"],
                                            env=self.env, stdout=log, stderr=log)
        self._wait(lambda: self.rauc("status").returncode == 0, "rauc service")

    def rauc(self, *args: str, user: str | None = None) -> subprocess.CompletedProcess[str]:
        """``rauc ARGS`` as this user, or as ``user`` (root only: setpriv)."""
        if user:
            import pwd

            gid = pwd.getpwnam(user).pw_gid
        prefix = ["setpriv", f"--reuid={user}", f"--regid={gid}", "--init-groups"] if user else []
        return subprocess.run([*prefix, "rauc", *args], env=self.env, capture_output=True, text=True, timeout=30)

    def stop_service(self) -> None:
        if self.service is not None:
            self.service.terminate()
            self.service.wait(10)
            self.service = None

    def close(self) -> None:
        self.stop_service()
        self.bus.terminate()
        self.bus.wait(10)
        shutil.rmtree(self.socket.parent, ignore_errors=True)
