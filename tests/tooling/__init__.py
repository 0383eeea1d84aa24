"""The GPU-less test device, the SASS analysis and the layering contracts."""
