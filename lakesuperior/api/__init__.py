"""Operations built on the ``Repository`` for the front doors (CLI, admin pages).

``lakesuperior.api.admin``: statistics, checks, clean-up, backup, restore and
migration, usable without click.
"""
