/** The starter catalogue `npm run seed` writes: real species and well-known reference atlases. */

export interface SeedCategory {
  readonly name: string;
  readonly description: string;
}

export interface SeedSpecies {
  readonly name: string;
  /** "Genus species", the key the seed looks a species up by. */
  readonly scientificName: string;
  readonly description: string;
  /** A SeedCategory name. */
  readonly category: string;
}

export interface SeedAtlas {
  readonly name: string;
  /** A SeedSpecies scientific name. */
  readonly species: string;
  readonly version: string;
  readonly description: string;
  /** The paper's DOI link (the one its authors ask users to cite). */
  readonly publicationUrl: string;
  readonly color: string;
}

export interface SeedCatalogue {
  readonly categories: readonly SeedCategory[];
  readonly species: readonly SeedSpecies[];
  readonly atlases: readonly SeedAtlas[];
}

export const SEED_CATALOGUE: SeedCatalogue = {
  categories: [
    { name: 'rodents', description: 'Mice and rats, the most used mammalian models in neuroscience.' },
    { name: 'primates', description: 'Humans and non-human primates.' },
    { name: 'fish', description: 'Teleost fish, chiefly the zebrafish larva.' },
  ],
  species: [
    {
      name: 'house mouse',
      scientificName: 'Mus musculus',
      description: 'The laboratory mouse, the main genetic model of mammalian brain research.',
      category: 'rodents',
    },
    {
      name: 'brown rat',
      scientificName: 'Rattus norvegicus',
      description: 'The laboratory rat (e.g. the Sprague Dawley and Wistar strains).',
      category: 'rodents',
    },
    {
      name: 'human',
      scientificName: 'Homo sapiens',
      description: 'Humans.',
      category: 'primates',
    },
    {
      name: 'rhesus macaque',
      scientificName: 'Macaca mulatta',
      description: 'The rhesus monkey, the most studied non-human primate in systems neuroscience.',
      category: 'primates',
    },
    {
      name: 'zebrafish',
      scientificName: 'Danio rerio',
      description:
        'The zebrafish, whose transparent larva allows whole-brain imaging at cellular resolution.',
      category: 'fish',
    },
  ],
  atlases: [
    {
      name: 'Allen Mouse Brain Common Coordinate Framework',
      species: 'Mus musculus',
      version: 'CCFv3 2017',
      description:
        'The Allen Institute 3D reference space of the adult C57BL/6J mouse brain: an average template of 1,675 specimens at 10 µm with annotated structures.',
      publicationUrl: 'https://doi.org/10.1016/j.cell.2020.04.007',
      color: '#1f77b4',
    },
    {
      name: 'Waxholm Space atlas of the Sprague Dawley rat brain',
      species: 'Rattus norvegicus',
      version: 'v4',
      description:
        'Open volumetric atlas of the adult rat brain from ex vivo MRI and DTI at 39 µm, with 222 delineated structures in version 4.',
      publicationUrl: 'https://doi.org/10.1038/s41592-023-02034-3',
      color: '#ff7f0e',
    },
    {
      name: 'MNI ICBM 2009c Nonlinear Symmetric',
      species: 'Homo sapiens',
      version: '2009c',
      description:
        'Unbiased nonlinear average of 152 adult MRI scans in MNI space, the symmetric variant of the ICBM 2009c templates.',
      publicationUrl: 'https://doi.org/10.1016/j.neuroimage.2010.07.033',
      color: '#2ca02c',
    },
    {
      name: 'BigBrain',
      species: 'Homo sapiens',
      version: '2015',
      description:
        'An ultrahigh-resolution 3D reconstruction of one human brain from 7,404 histological sections at 20 µm.',
      publicationUrl: 'https://doi.org/10.1126/science.1235381',
      color: '#d62728',
    },
    {
      name: 'Julich-Brain',
      species: 'Homo sapiens',
      version: '3.1',
      description: 'Probabilistic cytoarchitectonic maps of the human brain from ten postmortem brains.',
      publicationUrl: 'https://doi.org/10.1126/science.abb4588',
      color: '#9467bd',
    },
    {
      name: 'NIMH Macaque Template',
      species: 'Macaca mulatta',
      version: 'NMT v2',
      description:
        'Population-average rhesus macaque template with the hierarchical CHARM cortical and SARM subcortical atlases.',
      publicationUrl: 'https://doi.org/10.1016/j.neuroimage.2021.117997',
      color: '#8c564b',
    },
    {
      name: 'D99 digital macaque atlas',
      species: 'Macaca mulatta',
      version: '2.0',
      description:
        'Three-dimensional digital template atlas of the rhesus macaque brain, based on the Saleem and Logothetis atlas.',
      publicationUrl: 'https://doi.org/10.1093/cercor/bhw248',
      color: '#e377c2',
    },
    {
      name: 'Z-Brain',
      species: 'Danio rerio',
      version: '2015',
      description:
        'Larval zebrafish (6 dpf) reference brain with anatomical labels and activity maps registered to it.',
      publicationUrl: 'https://doi.org/10.1038/nmeth.3581',
      color: '#7f7f7f',
    },
    {
      name: 'mapzebrain',
      species: 'Danio rerio',
      version: '2019',
      description:
        'Cellular-resolution atlas of the larval zebrafish brain with thousands of traced single neurons.',
      publicationUrl: 'https://doi.org/10.1016/j.neuron.2019.04.034',
      color: '#17becf',
    },
  ],
};
