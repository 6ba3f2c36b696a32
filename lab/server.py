"""The server of the lab app: Debian's jupyterlab-server (LabServerApp) on jupyter-server 1.23,
serving the front end that webpack built into build/. `npm run lab` starts it (scripts/lab.ts);
any jupyter-server option can follow, e.g. --ServerApp.port=8890.

jupyter-server 1.23 lacks two endpoints of jupyter-server 2 that JupyterLab 4 calls on every
page: /api/me (who is logged in) and the websocket /api/events/subscribe. Both are answered
here, as jupyter-server 2 would for a single token user, so that the page logs no errors.
"""
import json
import os

from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.zmqhandlers import WebSocketMixin
from jupyterlab_server import LabServerApp
from tornado import web
from tornado.websocket import WebSocketHandler
from traitlets import Unicode

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, "build")

# Configuration files in the reader's Jupyter folders are for their own Jupyter, not this app.
os.environ["JUPYTER_NO_CONFIG"] = "1"

with open(os.path.join(HERE, "package.json"), encoding="utf-8") as f:
    VERSION = json.load(f)["version"]


class IdentityHandler(APIHandler):
    """GET /api/me: the one user a token server has, with no permission checks."""

    @web.authenticated
    def get(self):
        # jupyter-server 1.23 gives a token user a random id as its name.
        user = self.current_user if isinstance(self.current_user, str) else "reader"
        self.finish(
            json.dumps(
                {
                    "identity": {
                        "username": user,
                        "name": "Reader",
                        "display_name": "Reader",
                        "initials": "R",
                        "avatar_url": None,
                        "color": None,
                    },
                    "permissions": {},
                }
            )
        )


class EventsSocket(WebSocketMixin, WebSocketHandler, JupyterHandler):
    """/api/events/subscribe: accepted and kept open; jupyter-server 1.23 emits no events."""

    async def get(self, *args, **kwargs):
        if self.current_user is None:
            raise web.HTTPError(403)
        return await super().get(*args, **kwargs)

    def on_message(self, message):
        pass


def _jupyter_server_extension_points():
    # jupyter-server loads the app as an extension of this module, found by this function.
    return [{"module": __name__, "app": TutorialLab}]


class TutorialLab(LabServerApp):
    # The extension's name is its module's: "__main__" when run as a script.
    name = __name__
    extension_url = "/lab"
    default_url = "/lab"
    load_other_extensions = False
    app_name = "JupyterLab"
    app_version = VERSION
    # overrides.json here: no news feed and no update check (the page would ask, and both need
    # the internet, which a reader of the tutorial may not have).
    app_settings_dir = HERE
    schemas_dir = os.path.join(BUILD, "schemas")
    static_dir = BUILD
    templates_dir = os.path.join(HERE, "templates")
    themes_dir = os.path.join(BUILD, "themes")
    # Traits, not plain values, so that the test can put them in its own folder.
    user_settings_dir = Unicode(os.path.join(BUILD, "user_settings"), config=True, help="The reader's settings.")
    workspaces_dir = Unicode(os.path.join(BUILD, "workspaces"), config=True, help="The saved workspaces.")

    def initialize_handlers(self):
        self.handlers.append((r"/api/me", IdentityHandler))
        self.handlers.append((r"/api/events/subscribe", EventsSocket))
        super().initialize_handlers()

    def initialize_settings(self):
        super().initialize_settings()
        self.serverapp.web_app.settings["terminals_available"] = False


if __name__ == "__main__":
    TutorialLab.launch_instance()
