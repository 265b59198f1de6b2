"""Post-start configuration of the real WebArena images: base URLs, the admin
password policy, GitLab's external URL, nginx port and puma workers, Postmill's rate limits, Magento's indexers;
and what stops a site's services cleanly before its snapshot, and GitLab's 502 fix.

Every command is an argv list run with `docker exec` in the site's container, once, before the configured
container is committed as the snapshot image, so resets never run them again."""

from __future__ import annotations

from dataclasses import dataclass

from webrl.sites.docker.images import WEBARENA

MAGENTO = "/var/www/magento2/bin/magento"
MAGENTO_DB = ("mysql", "-u", "magentouser", "-pMyPassword", "magentodb", "-e")
POSTMILL = "/var/www/html"
POSTMILL_RATE_LIMITED = ("CommentData.php", "SubmissionData.php", "UserData.php")
GITLAB_RB = "/etc/gitlab/gitlab.rb"
GITLAB_PUMA_WORKERS = 4  # the fix for GitLab's 500s and timeouts (webarena-setup; BrowserGym#285)
GITLAB_PG_DATA = "/var/opt/gitlab/postgresql/data"
GITLAB_PG_LOG = "/var/log/gitlab/postgresql/current"
GITLAB_BIN = "/opt/gitlab/embedded/bin"
# VAB's refresh script puts these (not all) of the shop's indexers on schedule, "to disable re-indexing of products".
MAGENTO_SCHEDULED_INDEXERS = (
    "catalogrule_product",
    "catalogrule_rule",
    "catalogsearch_fulltext",
    "catalog_category_product",
    "customer_grid",
    "design_config_grid",
    "inventory",
    "catalog_product_category",
    "catalog_product_attribute",
    "catalog_product_price",
    "cataloginventory_stock",
)


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
                Command(
                    "set Magento's indexers to schedule",
                    (MAGENTO, "indexer:set-mode", "schedule", *MAGENTO_SCHEDULED_INDEXERS),
                ),
                _flush(),
            ]
        case "shopping_admin":
            return _magento(base_url) + [
                Command(
                    "stop forcing a password change", (MAGENTO, "config:set", "admin/security/password_is_forced", "0")
                ),
                Command(
                    "stop expiring the admin password", (MAGENTO, "config:set", "admin/security/password_lifetime", "0")
                ),
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
        # The cache was rebuilt as root: give it back to the owner of var/ (the web server's user), or PHP cannot
        # write it.
        Command(
            "give Postmill's cache back to its user",
            ("chown", "-R", f"--reference={POSTMILL}/var", f"{POSTMILL}/var/cache"),
        ),
    ]


def _gitlab(base_url: str) -> list[Command]:
    # nginx listens on the port of external_url unless told otherwise: pinned to 8023, the URL can carry the host
    # port (instance k, a custom port) while the container port stays the one the host port is mapped to.
    settings = {"nginx['listen_port']": WEBARENA["gitlab"].port, "puma['worker_processes']": GITLAB_PUMA_WORKERS}
    edits = [
        Command("set GitLab's external URL", ("sed", "-i", f"s|^external_url.*|external_url '{base_url}'|", GITLAB_RB))
    ]
    for key, value in settings.items():
        pattern = key.replace("[", "\\[").replace("]", "\\]")
        edits += [
            Command(f"drop a {key} setting", ("sed", "-i", f"/^{pattern}/d", GITLAB_RB)),
            Command(f"set {key}", ("sh", "-c", f'echo "{key} = {value}" >> {GITLAB_RB}')),
        ]
    return edits + [Command("reconfigure GitLab (minutes)", ("gitlab-ctl", "reconfigure"))]


def stop_commands(site: str) -> list[Command]:
    """What stops a site's services cleanly before its container is stopped. The Magento and Postmill images run
    supervisord, which stops its programs on the container's SIGTERM; GitLab's runsvdir exits on SIGTERM without
    stopping its services (the original image), so they are stopped first."""
    return [Command("stop GitLab's services", ("gitlab-ctl", "stop"))] if site == "gitlab" else []


def gitlab_stale_lock_check() -> tuple[str, ...]:
    """Exits 0 if GitLab's PostgreSQL refused to start because of a stale pid file (PostgreSQL's own message)."""
    return ("grep", "-qF", 'lock file "postmaster.pid" already exists', GITLAB_PG_LOG)


def gitlab_recovery_commands() -> list[Command]:
    """The README's fix when GitLab answers 502 after a start: a stale postmaster.pid and write-ahead log."""
    return [
        Command("remove PostgreSQL's stale pid file", ("rm", "-f", f"{GITLAB_PG_DATA}/postmaster.pid")),
        # As the database's owner, not root (webarena PR #233).
        Command(
            "reset PostgreSQL's write-ahead log",
            (f"{GITLAB_BIN}/pg_resetwal", "-f", GITLAB_PG_DATA),
            user="gitlab-psql",
        ),
        Command("restart GitLab's services", ("gitlab-ctl", "restart")),
    ]
