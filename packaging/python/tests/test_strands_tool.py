"""verifetch_client.strands_tool: lazy strands import, plain-function
fallback, and the decorated path (with a stand-in strands module, because the
real SDK is not installable here)."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import fixture

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A stand-in for strands: records that it was imported and wraps the function
# the way strands.tool(name=...) does (a callable object with a tool_name).
FAKE_STRANDS = textwrap.dedent('''
    import os
    os.environ["FAKE_STRANDS_IMPORTED"] = "1"

    class FakeTool:
        def __init__(self, func, name):
            self.func, self.tool_name = func, name
        def __call__(self, *args, **kwargs):
            return self.func(*args, **kwargs)

    def tool(func=None, *, name=None, **_):
        def wrap(f):
            return FakeTool(f, name or f.__name__)
        return wrap(func) if func is not None else wrap
''')


def run_python(code: str, extra_path: str | None = None) -> dict:
    """Run code in a fresh interpreter; it prints one JSON line."""
    path = [PACKAGE_ROOT] + ([extra_path] if extra_path else [])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, check=True,
                         capture_output=True, text=True, timeout=60)
    return json.loads(out.stdout.strip().splitlines()[-1])


class LazyImport(unittest.TestCase):
    def setUp(self) -> None:
        self.fake_dir = tempfile.mkdtemp(prefix="vf-fake-strands-")
        os.mkdir(os.path.join(self.fake_dir, "strands"))
        with open(os.path.join(self.fake_dir, "strands", "__init__.py"), "w", encoding="utf-8") as f:
            f.write(FAKE_STRANDS)

    def tearDown(self) -> None:
        os.unlink(os.path.join(self.fake_dir, "strands", "__init__.py"))
        os.rmdir(os.path.join(self.fake_dir, "strands"))
        os.rmdir(self.fake_dir)

    def test_package_import_never_imports_strands(self) -> None:
        seen = run_python('''
            import json, os, sys
            import verifetch_client
            print(json.dumps({"loaded": "strands" in sys.modules,
                              "ran": os.environ.get("FAKE_STRANDS_IMPORTED") == "1"}))
        ''', extra_path=self.fake_dir)
        self.assertEqual(seen, {"loaded": False, "ran": False})

    def test_tool_module_decorates_when_strands_is_present(self) -> None:
        seen = run_python('''
            import json, sys
            from verifetch_client import strands_tool as st
            t = st.verified_web_lookup
            print(json.dumps({"available": st.STRANDS_AVAILABLE, "type": type(t).__name__,
                              "name": getattr(t, "tool_name", None),
                              "wraps": getattr(t, "func", None) is st.verified_web_lookup_function}))
        ''', extra_path=self.fake_dir)
        self.assertEqual(seen, {"available": True, "type": "FakeTool", "name": "verified_web_lookup",
                                "wraps": True})

    def test_without_strands_the_tool_is_the_plain_function(self) -> None:
        seen = run_python('''
            import json, sys
            sys.modules["strands"] = None   # make `import strands` fail even if installed
            from verifetch_client import strands_tool as st
            print(json.dumps({"available": st.STRANDS_AVAILABLE,
                              "plain": st.verified_web_lookup is st.verified_web_lookup_function}))
        ''')
        self.assertEqual(seen, {"available": False, "plain": True})


class ModelFacingSignature(unittest.TestCase):
    def test_only_url_and_pass_criteria_are_parameters(self) -> None:
        from verifetch_client import strands_tool
        sig = inspect.signature(strands_tool.verified_web_lookup_function)
        self.assertEqual(list(sig.parameters), ["url", "must_contain", "min_chars", "max_attempts"])
        self.assertIsNone(sig.parameters["must_contain"].default)
        self.assertEqual(sig.parameters["min_chars"].default, 40)
        self.assertEqual(sig.parameters["max_attempts"].default, 3)
        doc = strands_tool.verified_web_lookup_function.__doc__ or ""
        for name in sig.parameters:  # strands builds the schema from the Args: section
            self.assertIn(f"{name}:", doc)


class PlainToolAgainstDaemon(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.origin = fixture.Origin()
        try:
            cls.daemon = fixture.Daemon()
        except BaseException:
            cls.origin.close()
            raise
        cls.saved = os.environ.get("VERIFETCH_SOCKET")
        os.environ["VERIFETCH_SOCKET"] = cls.daemon.socket_path
        saved_module = sys.modules.get("strands", "absent")
        sys.modules["strands"] = None  # type: ignore[assignment]
        try:
            import verifetch_client.strands_tool as st
            cls.st = importlib.reload(st)
        finally:
            if saved_module == "absent":
                del sys.modules["strands"]
            else:
                sys.modules["strands"] = saved_module  # type: ignore[assignment]

    @classmethod
    def tearDownClass(cls) -> None:
        if cls.saved is None:
            os.environ.pop("VERIFETCH_SOCKET", None)
        else:
            os.environ["VERIFETCH_SOCKET"] = cls.saved
        cls.daemon.stop()
        cls.origin.close()

    def test_plain_call_returns_the_tool_result(self) -> None:
        self.assertFalse(self.st.STRANDS_AVAILABLE)
        result = self.st.verified_web_lookup(self.origin.url("/article"), must_contain=fixture.MARKER)
        self.assertEqual(result["status"], "success", result)
        self.assertIn(fixture.MARKER, result["content"][1]["text"])
        # The tool's default budget reaches the broker (tenant ceiling is 5).
        self.assertEqual(result["content"][0]["json"]["max_attempts"], 3)

    def test_plain_call_reports_a_wall_as_error(self) -> None:
        result = self.st.verified_web_lookup(self.origin.url("/wall"), max_attempts=1)
        self.assertEqual(result["status"], "error")
        self.assertEqual(result["content"][0]["json"]["max_attempts"], 1)
        self.assertTrue(result["content"][1]["text"].startswith("LOOKUP FAILED:"))


if __name__ == "__main__":
    unittest.main()
