"""What each Debian package ships besides its virtual environment (docs/release.md, "What is in each package").

The repository's deploy/ files (systemd units, udev rules, drop-ins, examples) with the path and mode
each has once installed, which of them are conffiles, and the Debian packages each package depends
on or recommends. ``build.py`` copies them into the staging root; the tests read the same table.

Paths follow Debian bookworm's practice (what debhelper's dh_installsystemd, dh_installudev and
dh_installtmpfiles would use): units in /lib/systemd/system, udev rules in /lib/udev/rules.d,
tmpfiles in /usr/lib/tmpfiles.d; site settings (the NTP server, the journal's limits, RAUC's slots,
who may call RAUC) are conffiles under /etc, kept across upgrades.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Asset:
    source: str            # relative to the repository's root
    dest: str              # absolute installed path
    mode: int = 0o644
    conffile: bool = False


@dataclass(frozen=True)
class Relations:
    depends: tuple[str, ...]
    recommends: tuple[str, ...]


UNIT_DIR = "/lib/systemd/system"

TERMINAL_UNITS = ("egm-terminal.service", "egm-kiosk.service", "egm-update-boot.service")
HOST_UNITS = ("egm-host@.service", "egm-host.target", "egm-broker@.service")

TERMINAL_ASSETS: tuple[Asset, ...] = (
    Asset("deploy/cabinet/systemd/egm-terminal.service", f"{UNIT_DIR}/egm-terminal.service"),
    Asset("deploy/cabinet/systemd/egm-kiosk.service", f"{UNIT_DIR}/egm-kiosk.service"),
    Asset("deploy/update/egm-update-boot.service", f"{UNIT_DIR}/egm-update-boot.service"),
    Asset("deploy/cabinet/timesync/time-wait-sync-timeout.conf",
          f"{UNIT_DIR}/systemd-time-wait-sync.service.d/egm.conf"),
    Asset("deploy/cabinet/udev/60-egm.rules", "/lib/udev/rules.d/60-egm.rules"),
    Asset("deploy/cabinet/tmpfiles/egm.conf", "/usr/lib/tmpfiles.d/egm.conf"),
    Asset("deploy/cabinet/journald/egm.conf", "/etc/systemd/journald.conf.d/egm.conf", conffile=True),
    Asset("deploy/cabinet/timesync/egm.conf", "/etc/systemd/timesyncd.conf.d/egm.conf", conffile=True),
    Asset("deploy/update/system.conf", "/etc/rauc/system.conf", conffile=True),
    Asset("deploy/update/egm-rauc-bus.conf", "/etc/dbus-1/system.d/egm-rauc.conf", conffile=True),
    # Examples a technician merges or copies (docs/install.md): not active as shipped.
    Asset("deploy/cabinet/terminal.toml", "/usr/share/doc/egm-terminal/examples/terminal.toml"),
    Asset("deploy/cabinet/udev/60-egm.rules.site-example",
          "/usr/share/doc/egm-terminal/examples/60-egm.rules.site-example"),
    Asset("deploy/cabinet/mounts/fstab.example", "/usr/share/doc/egm-terminal/examples/fstab.example"),
    Asset("deploy/cabinet/mounts/var-lib-egm.mount", "/usr/share/doc/egm-terminal/examples/var-lib-egm.mount"),
    Asset("deploy/cabinet/README.md", "/usr/share/doc/egm-terminal/README.cabinet.md"),
)

HOST_ASSETS: tuple[Asset, ...] = (
    Asset("deploy/host/egm-host@.service", f"{UNIT_DIR}/egm-host@.service"),
    Asset("deploy/host/egm-host.target", f"{UNIT_DIR}/egm-host.target"),
    Asset("deploy/host/egm-broker@.service", f"{UNIT_DIR}/egm-broker@.service"),
    # The units start only once the technician wrote /etc/egm/host.env or broker.env from these
    # (ConditionPathExists=): they name the site's database and brokers, so no default is shipped.
    Asset("deploy/host/host.env.example", "/usr/share/doc/egm-host/examples/host.env.example"),
    Asset("deploy/host/host-0.env.example", "/usr/share/doc/egm-host/examples/host-0.env.example"),
    Asset("deploy/host/broker.env.example", "/usr/share/doc/egm-host/examples/broker.env.example"),
    Asset("deploy/host/README.md", "/usr/share/doc/egm-host/README.md"),
)

# Depends: what a minimal Debian root (debootstrap --variant=minbase) has or can satisfy, so that
# `dpkg -i` of the package works there (tests/deploy/test_release.py). The cabinet's and floor's
# heavy services (a compositor, RAUC, a database, a broker) are Recommends: apt installs them by
# default on a real cabinet or host; a test root or a headless evaluation machine goes without.
BASE_DEPENDS = ("python3 (>= 3.11~)", "python3 (<< 3.12)", "libc6 (>= 2.28)", "passwd",
                "init-system-helpers (>= 1.54~)")

RELATIONS: dict[str, Relations] = {
    "egm-terminal": Relations(
        depends=BASE_DEPENDS,
        recommends=("cage", "xwayland", "seatd", "rauc", "rauc-service", "dbus", "udev", "systemd-timesyncd",
                    "libegl1", "libegl-mesa0", "libgl1-mesa-dri")),
    "egm-host": Relations(
        depends=BASE_DEPENDS,
        # procps: /bin/kill of egm-broker@'s ExecReload (Priority important: on every normal install)
        recommends=("nats-server", "postgresql", "procps")),
}

# The binaries the shipped units run that come from other Debian packages (checked by
# tests/deploy/test_release_package.py against RELATIONS): Essential packages need no relation.
ESSENTIAL = ("coreutils", "dash", "util-linux")
FOREIGN_BINARIES: dict[str, str] = {
    "/bin/sh": "dash",
    "/bin/sleep": "coreutils",
    "/usr/bin/timeout": "coreutils",
    "/bin/kill": "procps",
    "/usr/bin/cage": "cage",
    "/usr/sbin/nats-server": "nats-server",
}

ASSETS: dict[str, tuple[Asset, ...]] = {"egm-terminal": TERMINAL_ASSETS, "egm-host": HOST_ASSETS}
UNITS: dict[str, tuple[str, ...]] = {"egm-terminal": TERMINAL_UNITS, "egm-host": HOST_UNITS}
