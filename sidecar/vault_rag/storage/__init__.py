"""Where the sidecar's data lives and how it is written: the data dir's location
(`storage/locations.py`), private files and folders (`storage/private_files.py`), and disk faults
told apart from damage (`storage/disk_faults.py`). Imports nothing of the sidecar but settings."""
