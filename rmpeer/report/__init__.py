"""Reports: pictures of the host and the pairs, and the Allure HTML report."""
