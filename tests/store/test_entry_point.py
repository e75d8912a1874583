"""The rdflib store plugin is found through its entry point, with no registration."""
import subprocess
import sys
import textwrap


def test_rdflib_finds_the_plugin_by_name(tmp_path):
    code = textwrap.dedent(f"""
        import rdflib
        ds = rdflib.Dataset(store="Lakesuperior")
        ds.open({str(tmp_path / "store")!r}, create=True)
        ds.add((rdflib.URIRef("http://ex.org/s"), rdflib.URIRef("http://ex.org/p"),
                rdflib.Literal("o"), rdflib.URIRef("http://ex.org/g")))
        ds.commit()
        print(len(list(ds.quads((None, None, None, None)))))
        ds.close()
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"


def test_the_plugin_runs_sparql_with_the_fast_path(tmp_path):
    """A fresh process: the plugin by name, the fast path turned on explicitly."""
    code = textwrap.dedent(f"""
        import rdflib
        from rdflib.plugins.sparql import CUSTOM_EVALS
        from lakesuperior.query import enable_sparql_fast_path, native_eval
        ds = rdflib.Dataset(store="Lakesuperior", default_union=True)
        ds.open({str(tmp_path / "store")!r}, create=True)
        for i in range(3):
            ds.add((rdflib.URIRef(f"http://ex.org/s{{i}}"), rdflib.RDF.type,
                    rdflib.URIRef("http://ex.org/C"), rdflib.URIRef(f"http://ex.org/g{{i}}")))
        ds.commit()
        assert native_eval not in CUSTOM_EVALS.values()
        enable_sparql_fast_path()
        assert native_eval in CUSTOM_EVALS.values()
        print(ds.query("SELECT (COUNT(?s) AS ?c) WHERE {{ ?s a <http://ex.org/C> }}")
              .bindings[0]["c"])
        ds.close()
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3"
