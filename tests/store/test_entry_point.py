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
