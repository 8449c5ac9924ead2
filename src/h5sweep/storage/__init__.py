"""What is stored and where: layouts, codecs, selections, filesystems, data sources."""
