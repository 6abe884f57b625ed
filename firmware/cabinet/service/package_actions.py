"""The game packages the host offered (firmware/cabinet/packages.py): list them, approve one
(verified again; its options pass the same check as ``config set``), or reject one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from firmware.cabinet.service.config_actions import plan_options, setting_name
from firmware.cabinet.service.errors import ServiceError
from firmware.cabinet.service.guards import round_open
from firmware.cabinet.service.words import no_args

if TYPE_CHECKING:
    from firmware.cabinet.service.api import ServiceApi


def _package_manager(api: ServiceApi) -> Any:
    link = api.terminal.hostlink
    manager = None if link is None else link.packages
    if manager is None:
        raise ServiceError("this terminal takes no game packages (no host link)")
    return manager


def _role(api: ServiceApi) -> str | None:
    return api.session.role if api.session else None


def packages(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    no_args(args, "packages")
    status = _package_manager(api).status()
    return status, f"{len(status['pending'])} waiting, {len(status['installed'])} installed"


def package_approve(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    from egmproto.package_format import PackageRejected

    if len(args) != 1:
        raise ServiceError("usage: package approve NAME")
    if round_open(api.terminal):
        raise ServiceError("a round is in progress: a package waits for it to end")
    manager = _package_manager(api)
    try:
        package = manager.reverify(args[0])
    except PackageRejected as exc:
        raise ServiceError(f"package {args[0]} refused and deleted: {exc}") from None
    cfg = api.terminal.cfg
    stored: dict[str, dict[str, Any]] = {}
    findings: list[Any] = []
    for game, change in sorted(package.options().items()):       # every game checked before any change
        cfg, stored[game], found = plan_options(api, cfg, game, change)
        findings += found
    manager.place(package)                                        # files first: not yet a record
    with api.ledger.batch():     # the options and the installed record: all of it or none of it
        for game, table in stored.items():
            api.ledger.store_setting(setting_name(game), table)
        record = manager.record(package, role=_role(api))
    manager.forget_file(package.sha256)
    api.terminal.use_config(cfg, sorted(stored))                  # from the next round
    return ({"installed": record, "options": stored, "applied": "from the next round",
             "findings": [f.to_json() for f in findings]},
            f"{package.name} {package.version} ({package.sha256[:12]}): {', '.join(sorted(stored))}")


def package_reject(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    if len(args) != 1:
        raise ServiceError("usage: package reject NAME")
    entry = _package_manager(api).decline(args[0], role=_role(api))
    return {"declined": entry}, f"{args[0]} {entry['version']}"
