"""Writers for the artefacts of an extraction run (docs/semantics.md section 4).

Framework-free: plain results in (metrics.engine.attributes.types), files out. The offline command
writes a whole folder with `metrics.pipeline.extraction_folder`; the server's artefact download
(`exports`) calls the same writers on an open file or a path.
"""
