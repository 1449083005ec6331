"""PDFium's fonts for reading text: the machine's font folders plus our glyph-boxes fallback
(issue 40).

PDFium drops a text object whose bounding box has no width, and a glyph that no available font
has gets an empty box. So a PDF naming a CJK font it does not embed (STSong-Light, SimSun...)
lost, on a machine without any CJK font, every text object made of one such glyph: a lone
`。` ending a page, or whole pages where each character is placed on its own. The fallback
font (`fonts/glyph-boxes.ttf`, built by scripts/pdf_fallback_font.py) gives every CJK code
point a square box, so those objects keep their text. It declares only CJK code pages, and
the machine's own fonts stay in the list, so it changes nothing where a CJK font is installed.

Linux only: there PDFium scans font folders, and a user list replaces its default folders, so
the defaults are passed again first. On Windows a user list would replace the system's font
service, and macOS and Windows ship CJK fonts.
"""

from __future__ import annotations

import ctypes
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import pypdfium2.raw as pdfium_c

log = logging.getLogger(__name__)

FALLBACK_DIR = Path(__file__).parent / "fonts"
# PDFium's own default folders on Linux (CreateDefaultSystemFontInfo, fx_linux_impl.cpp)
LINUX_FONT_DIRS = (
    "/usr/share/fonts",
    "/usr/share/X11/fonts/Type1",
    "/usr/share/X11/fonts/TTF",
    "/usr/local/share/fonts",
)

_installed: tuple[str, ...] | None = None  # the font folders PDFium was given, once done


def install_fallback_fonts(
    system_dirs: Sequence[str] = LINUX_FONT_DIRS, *, with_fallback: bool = True
) -> tuple[str, ...]:
    """Restart PDFium with `system_dirs` and the fallback folder as its font folders (once per
    process, before any document is opened; Linux only). Returns the folders in use, empty
    where nothing was changed. pypdfium2 starts PDFium with the default folders on import, so
    this closes that library and starts it again with the same config plus the folders.
    (`system_dirs=()` stands in for a machine without fonts, `with_fallback=False` for the
    reader before the fix: both for tests.)"""
    global _installed
    if _installed is not None:
        return _installed
    if not sys.platform.startswith("linux"):
        _installed = ()
        return _installed
    from pypdfium2 import _library_scope
    from pypdfium2.internal import bases

    folders = (*system_dirs, *([str(FALLBACK_DIR)] if with_fallback else []))
    try:
        _library_scope.destroy_lib()
        _init_with_font_folders(folders)
        _mark_available(bases, True)
    except Exception as exc:  # a pypdfium2 whose start-up differs: read without the fallback
        log.warning("PDF fallback fonts not installed (%s): CJK text may be incomplete", exc)
        if not bases.LIBRARY_AVAILABLE:
            _library_scope.init_lib()
        _installed = ()
        return _installed
    _installed = folders
    return _installed


def _mark_available(bases: object, value: bool) -> None:
    """pypdfium2's own "library started" flag, as its init_lib sets it: a shared mutable (a
    ctypes bool in 4.x, its own holder in early 5.x) or, later, a plain module bool."""
    flag = bases.LIBRARY_AVAILABLE  # type: ignore[attr-defined]
    if hasattr(flag, "value"):
        flag.value = value
    else:
        bases.LIBRARY_AVAILABLE = value  # type: ignore[attr-defined]


def _init_with_font_folders(folders: Sequence[str]) -> None:
    char_p = ctypes.POINTER(ctypes.c_char)
    # PDFium keeps the pointers: the buffers live as long as the process (module global).
    buffers = [ctypes.create_string_buffer(f.encode()) for f in folders]
    array = (char_p * (len(folders) + 1))(*[ctypes.cast(b, char_p) for b in buffers], None)
    _KEEP_ALIVE.extend([buffers, array])
    config = pdfium_c.FPDF_LIBRARY_CONFIG(
        version=2, m_pUserFontPaths=array, m_pIsolate=None, m_v8EmbedderSlot=0
    )
    pdfium_c.FPDF_InitLibraryWithConfig(config)


_KEEP_ALIVE: list[object] = []
