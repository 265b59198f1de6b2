"""Post-start configuration of the real WebArena images (reference/webarena-env.md §1.4): base URLs, the admin
password policy, GitLab's external URL and puma workers, Postmill's rate limits, Magento's indexers.

Every command is an argv list run with `docker exec` in the site's container, once, before the configured
container is committed as the snapshot image, so resets never run them again."""

from __future__ import annotations

from dataclasses import dataclass

MAGENTO = "/var/www/magento2/bin/magento"
MAGENTO_DB = ("mysql", "-u", "magentouser", "-pMyPassword", "magentodb", "-e")
POSTMILL = "/var/www/html"
POSTMILL_RATE_LIMITED = ("CommentData.php", "SubmissionData.php", "UserData.php")
GITLAB_RB = "/etc/gitlab/gitlab.rb"
GITLAB_PUMA_WORKERS = 4  # the fix for GitLab's 500s and timeouts (webarena-setup; BrowserGym#285)
GITLAB_PG_DATA = "/var/opt/gitlab/postgresql/data"
GITLAB_BIN = "/opt/gitlab/embedded/bin"


@dataclass(frozen=True)
class Command:
    """One configuration step: what runs in the container, as which user, and why (shown while it runs)."""

    why: str
    argv: tuple[str, ...]
    user: str = "root"


def configure_commands(site: str, base_url: str) -> list[Command]:
    """The commands that make a fresh container of `site` serve at `base_url` (scheme, host and port, no path)."""
    base_url = base_url.rstrip("/")
    match site:
        case "shopping":
            return _magento(base_url) + [
                # VAB: indexers on schedule, so that admin edits do not re-index the whole catalogue.
                Command("set Magento's indexers to schedule", (MAGENTO, "indexer:set-mode", "schedule")),
                _flush(),
            ]
        case "shopping_admin":
            return _magento(base_url) + [
                Command("stop forcing a password change", (MAGENTO, "config:set",
                                                           "admin/security/password_is_forced", "0")),
                Command("stop expiring the admin password", (MAGENTO, "config:set",
                                                             "admin/security/password_lifetime", "0")),
                _flush(),
            ]
        case "reddit":
            return _postmill()
        case "gitlab":
            return _gitlab(base_url)
    return []


def _magento(base_url: str) -> list[Command]:
    # The direct update as well: setup:store-config:set alone left secure links on the old host (webarena PR #29).
    secure = f'UPDATE core_config_data SET value="{base_url}/" WHERE path = "web/secure/base_url";'
    return [
        Command("set the store's base URL", (MAGENTO, "setup:store-config:set", f"--base-url={base_url}")),
        Command("set the secure base URL", (*MAGENTO_DB, secure)),
    ]


def _flush() -> Command:
    return Command("flush Magento's cache", (MAGENTO, "cache:flush"))


def _postmill() -> list[Command]:
    files = [f"{POSTMILL}/src/DataObject/{name}" for name in POSTMILL_RATE_LIMITED]
    return [
        # Agents post and comment faster than people; VAB deletes the rate-limit annotations.
        Command("remove Postmill's rate limits", ("sed", "-i", "/@RateLimit/d", *files)),
        Command("clear Postmill's cache", ("php", f"{POSTMILL}/bin/console", "cache:clear", "--env=prod")),
    ]


def _gitlab(base_url: str) -> list[Command]:
    puma = f"puma['worker_processes'] = {GITLAB_PUMA_WORKERS}"
    return [
        Command("set GitLab's external URL", ("sed", "-i", f"s|^external_url.*|external_url '{base_url}'|",
                                              GITLAB_RB)),
        Command("drop a puma worker setting", ("sed", "-i", "/^puma\\['worker_processes'\\]/d", GITLAB_RB)),
        Command("set GitLab's puma workers", ("sh", "-c", f'echo "{puma}" >> {GITLAB_RB}')),
        Command("reconfigure GitLab (minutes)", ("gitlab-ctl", "reconfigure")),
    ]


def gitlab_recovery_commands() -> list[Command]:
    """The README's fix when GitLab answers 502 after a start: a stale postmaster.pid and write-ahead log."""
    return [
        Command("remove PostgreSQL's stale pid file", ("rm", "-f", f"{GITLAB_PG_DATA}/postmaster.pid")),
        # As the database's owner, not root (webarena PR #233).
        Command("reset PostgreSQL's write-ahead log", (f"{GITLAB_BIN}/pg_resetwal", "-f", GITLAB_PG_DATA),
                user="gitlab-psql"),
        Command("restart GitLab's services", ("gitlab-ctl", "restart")),
    ]

