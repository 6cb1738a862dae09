from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("annotations", "0001_initial"),
        ("experiments", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="SplitHistory",
            fields=[],
            options={
                "verbose_name": "project split history",
                "verbose_name_plural": "project split histories",
                "proxy": True,
                "indexes": [],
                "constraints": [],
            },
            bases=("annotations.project",),
        ),
    ]
